package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/tools"
)

// newTestFetch returns web_fetch with 127.0.0.1 opened the way a user would open it
// (tools.web.allowPrivate), since httptest servers listen there.
func newTestFetch(t *testing.T, cfg Config, allow ...string) *Fetch {
	t.Helper()
	g, err := netguard.New(netguard.Config{AllowPrivate: allow})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Guard = g
	f, err := NewFetch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func run(t *testing.T, f *Fetch, args string) (fetchResult, tools.Result) {
	t.Helper()
	res := tools.Run(context.Background(), f, tools.Call{ID: "c1", Args: []byte(args)})
	var out fetchResult
	if !res.IsError || strings.HasPrefix(res.Content, "{") {
		if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
			t.Fatalf("result is not JSON: %v\n%s", err, res.Content)
		}
	}
	return out, res
}

func urlArgs(u string, extra ...string) string {
	b, _ := json.Marshal(u)
	return `{"url":` + string(b) + strings.Join(extra, "") + `}`
}

// site serves the pages the tests fetch and counts requests per path.
type site struct {
	*httptest.Server
	hits map[string]*atomic.Int32
}

func newSite(t *testing.T) *site {
	s := &site{hits: map[string]*atomic.Int32{}}
	for _, p := range []string{"/article", "/big", "/json", "/png", "/sniff", "/missing", "/latin1"} {
		s.hits[p] = &atomic.Int32{}
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := s.hits[r.URL.Path]; c != nil {
			c.Add(1)
		}
		switch p := r.URL.Path; {
		case p == "/article":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, articlePage)
		case p == "/big":
			w.Header().Set("Content-Type", "text/plain")
			line := strings.Repeat("x", 1023) + "\n"
			for i := 0; i < 10*1024; i++ { // 10 MB
				if _, err := io.WriteString(w, line); err != nil {
					return
				}
			}
		case p == "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"temp": 21, "unit": "C"}`)
		case p == "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n0000"))
		case p == "/sniff":
			w.Header()["Content-Type"] = nil
			w.Write([]byte("%PDF-1.7\n binary"))
		case p == "/missing":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "no such page")
		case p == "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
			w.Write([]byte("caf\xe9"))
		case strings.HasPrefix(p, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/hop/"))
			if n > 0 {
				http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
				return
			}
			io.WriteString(w, "arrived")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestFetchHTMLAsMarkdown(t *testing.T) {
	s := newSite(t)
	f := newTestFetch(t, Config{}, "127.0.0.1")
	out, res := run(t, f, urlArgs(s.URL+"/article#top"))
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	if out.Title != "Reef Tide Tables" || out.Status != 200 || out.ContentType != "text/html" || out.Truncated {
		t.Errorf("got title %q status %d type %q truncated %v", out.Title, out.Status, out.ContentType, out.Truncated)
	}
	if out.URL != s.URL+"/article" || out.FinalURL != s.URL+"/article" {
		t.Errorf("url %q finalUrl %q", out.URL, out.FinalURL)
	}
	if !strings.HasPrefix(out.Text, "# Tide tables\n\nThe tide rises **twice**") {
		t.Errorf("text does not start with the main content:\n%s", out.Text)
	}
	if !strings.Contains(res.Content, "[full table]("+s.URL+"/docs/tides?x=1&y=2)") {
		t.Errorf("relative link not resolved against the page:\n%s", out.Text)
	}
	if strings.Contains(out.Text, "Menu item") || strings.Contains(out.Text, "Copyright") {
		t.Errorf("menu or footer kept:\n%s", out.Text)
	}
	out, _ = run(t, f, urlArgs(s.URL+"/article", `,"extractMode":"text"`))
	if strings.Contains(out.Text, "**") || !strings.HasPrefix(out.Text, "Tide tables\n\nThe tide rises twice") {
		t.Errorf("text mode:\n%s", out.Text)
	}
}

func TestFetchCutsAHugeBodyAtTheLimit(t *testing.T) {
	s := newSite(t)
	f := newTestFetch(t, Config{}, "127.0.0.1")
	out, res := run(t, f, urlArgs(s.URL+"/big", `,"maxChars":100000`))
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	if !out.Truncated || len(out.Text) != 100000 {
		t.Errorf("truncated %v, %d chars; want true, 100000", out.Truncated, len(out.Text))
	}
	page, _ := f.cache.get("markdown " + s.URL + "/big")
	if len(page.Text) != DefaultMaxBodyBytes || !page.Truncated {
		t.Errorf("read %d bytes (truncated %v), want the %d-byte limit", len(page.Text), page.Truncated, DefaultMaxBodyBytes)
	}
	out, _ = run(t, f, urlArgs(s.URL+"/big"))
	if len(out.Text) != DefaultMaxChars {
		t.Errorf("default maxChars: %d chars, want %d", len(out.Text), DefaultMaxChars)
	}
}

// countingReader counts the bytes read from an endless stream.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

func TestReadBodyStopsAtTheLimit(t *testing.T) {
	r := &countingReader{}
	body, truncated, err := readBody(r, 2<<20)
	if err != nil || !truncated || len(body) != 2<<20 {
		t.Fatalf("got %d bytes, truncated %v, %v", len(body), truncated, err)
	}
	if r.n > 2<<20+64<<10 {
		t.Errorf("read %d bytes of an endless body, want about %d", r.n, 2<<20)
	}
}

func TestFetchRedirectLimit(t *testing.T) {
	s := newSite(t)
	f := newTestFetch(t, Config{}, "127.0.0.1")
	out, res := run(t, f, urlArgs(s.URL+"/hop/3"))
	if res.IsError || out.Text != "arrived" || out.FinalURL != s.URL+"/hop/0" {
		t.Errorf("3 redirects: %+v %s", out, res.Content)
	}
	_, res = run(t, f, urlArgs(s.URL+"/hop/4"))
	if !res.IsError || !strings.Contains(res.Content, "stopped after 3 redirects") {
		t.Errorf("4 redirects: %s, want refused", res.Content)
	}
}

func TestFetchCachesPages(t *testing.T) {
	s := newSite(t)
	f := newTestFetch(t, Config{}, "127.0.0.1")
	now := time.Now()
	f.cache.now = func() time.Time { return now }
	first, _ := run(t, f, urlArgs(s.URL+"/article"))
	second, res := run(t, f, urlArgs(s.URL+"/article", `,"maxChars":100`))
	if got := s.hits["/article"].Load(); got != 1 {
		t.Errorf("%d requests for two fetches, want 1", got)
	}
	if res.IsError || !second.Truncated || len([]rune(second.Text)) != 100 || !strings.HasPrefix(first.Text, second.Text) {
		t.Errorf("cached fetch with maxChars 100: %+v", second)
	}
	now = now.Add(DefaultCacheTTL)
	run(t, f, urlArgs(s.URL+"/article"))
	if got := s.hits["/article"].Load(); got != 2 {
		t.Errorf("%d requests after the cache expired, want 2", got)
	}
	run(t, f, urlArgs(s.URL+"/missing"))
	run(t, f, urlArgs(s.URL+"/missing"))
	if got := s.hits["/missing"].Load(); got != 2 {
		t.Errorf("a 404 was cached: %d requests, want 2", got)
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := newCache(2, time.Minute, time.Now)
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, fetchResult{Text: k})
	}
	if len(c.entries) != 2 {
		t.Errorf("%d entries, want 2", len(c.entries))
	}
	if _, ok := c.get("c"); !ok {
		t.Error("the newest entry was evicted")
	}
}

func TestFetchContentTypes(t *testing.T) {
	s := newSite(t)
	f := newTestFetch(t, Config{}, "127.0.0.1")
	out, res := run(t, f, urlArgs(s.URL+"/json"))
	if res.IsError || out.Text != `{"temp": 21, "unit": "C"}` || out.ContentType != "application/json" {
		t.Errorf("json: %+v", out)
	}
	out, _ = run(t, f, urlArgs(s.URL+"/latin1"))
	if out.Text != "café" {
		t.Errorf("latin1: %q, want café", out.Text)
	}
	for path, want := range map[string]string{"/png": "image/png", "/sniff": "application/pdf"} {
		_, res := run(t, f, urlArgs(s.URL+path))
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %s, want refused naming %s", path, res.Content, want)
		}
	}
	out, res = run(t, f, urlArgs(s.URL+"/missing"))
	if !res.IsError || out.Status != 404 || out.Text != "no such page" {
		t.Errorf("404: %+v (error %v)", out, res.IsError)
	}
}

func TestFetchRefusesPrivateAddressesByDefault(t *testing.T) {
	s := newSite(t)
	f := newTestFetch(t, Config{})
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	for _, u := range []string{s.URL + "/article", "http://127.1:" + port + "/article", "http://[::ffff:127.0.0.1]:" + port + "/article",
		"http://localhost:" + port + "/article", "http://169.254.169.254/latest/meta-data/", "file:///etc/passwd"} {
		_, res := run(t, f, urlArgs(u))
		if !res.IsError || !strings.Contains(res.Content, "refused") {
			t.Errorf("%s: %s, want refused", u, res.Content)
		}
	}
	if got := s.hits["/article"].Load(); got != 0 {
		t.Errorf("%d requests reached the server, want 0", got)
	}
}

func TestFetchBadArguments(t *testing.T) {
	f := newTestFetch(t, Config{})
	for args, want := range map[string]string{
		`{}`: `"url" is required`,
		`{"url":"https://example.com","extractMode":"pdf"}`: `"extractMode" must be`,
		`{"url":"https://example.com","maxChars":5}`:        `"maxChars" must be between`,
		`{"url":"https://example.com","depth":2}`:           `unknown argument "depth"`,
		`{"url":"::not a url"}`:                             `is not a URL`,
	} {
		_, res := run(t, f, args)
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %s, want %q", args, res.Content, want)
		}
	}
}
