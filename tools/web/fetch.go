// Package web holds the tools that reach the web for the agent: web_fetch (a page as
// readable Markdown or text), whose every request goes through the SSRF guard
// (internal/netguard), and web_search (Brave, Tavily or SearXNG, at the operator's endpoint).
package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 2 << 20
	DefaultMaxChars     = 20_000
	MaxMaxChars         = 100_000
	DefaultTimeout      = 15 * time.Second
	DefaultMaxRedirects = 3
	DefaultCacheTTL     = 15 * time.Minute
	DefaultCacheEntries = 100
)

// Config configures web_fetch; zero fields take the defaults.
type Config struct {
	Guard        *netguard.Guard // required: every request passes it
	MaxBodyBytes int64           // most bytes of a body read; the rest is cut
	MaxChars     int             // text returned when the call names no maxChars
	Timeout      time.Duration   // per fetch, redirects included
	MaxRedirects int
	CacheTTL     time.Duration // how long a fetched page is served from memory
	CacheEntries int           // pages kept at most
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	def(&c.MaxChars, DefaultMaxChars)
	def(&c.MaxRedirects, DefaultMaxRedirects)
	def(&c.CacheEntries, DefaultCacheEntries)
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	return c
}

// Fetch is the web_fetch tool.
type Fetch struct {
	cfg    Config
	client *http.Client
	cache  *cache
}

var _ tools.Idempotent = (*Fetch)(nil)

// NewFetch returns the web_fetch tool; it fails without a guard.
func NewFetch(cfg Config) (*Fetch, error) {
	if cfg.Guard == nil {
		return nil, errors.New("web: web_fetch needs an SSRF guard")
	}
	cfg = cfg.withDefaults()
	return &Fetch{cfg: cfg, client: cfg.Guard.Client(cfg.Timeout, cfg.MaxRedirects),
		cache: newCache(cfg.CacheEntries, cfg.CacheTTL, time.Now)}, nil
}

// Idempotent: a fetch changes nothing here, so a call a crash interrupted is run again.
func (*Fetch) Idempotent() {}

type fetchArgs struct {
	URL         string `json:"url"`
	ExtractMode string `json:"extractMode"`
	MaxChars    int    `json:"maxChars"`
}

// fetchResult is what the model gets, as JSON.
type fetchResult struct {
	URL         string `json:"url"`
	FinalURL    string `json:"finalUrl"`
	Status      int    `json:"status"`
	Title       string `json:"title,omitempty"`
	ContentType string `json:"contentType"`
	Text        string `json:"text"`
	Truncated   bool   `json:"truncated"`
}

// Spec describes web_fetch to the model.
func (f *Fetch) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "web_fetch",
		Description: fmt.Sprintf("Fetch an http(s) URL and return its main content: HTML as readable Markdown "+
			"(or plain text) without menus and page furniture, text and JSON as they are; binary files are refused. "+
			"Returns {url, finalUrl, status, title, contentType, text, truncated}. At most %d redirects and %s of body "+
			"are read; pages are cached for %s. Addresses on this machine and private networks are refused.",
			f.cfg.MaxRedirects, sizeText(f.cfg.MaxBodyBytes), f.cfg.CacheTTL),
		Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"url":{"type":"string","description":"The http or https URL to fetch."},`+
			`"extractMode":{"type":"string","enum":["markdown","text"],"description":"markdown (default) keeps headings, links, lists and tables; text drops the markup."},`+
			`"maxChars":{"type":"integer","minimum":100,"maximum":%d,"description":"Most characters of text to return. Default %d."}},`+
			`"required":["url"],"additionalProperties":false}`, MaxMaxChars, f.cfg.MaxChars)),
	}
}

// Run fetches the page.
func (f *Fetch) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a fetchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	u, err := f.checkArgs(&a)
	if err != nil {
		return tools.Result{}, err
	}
	key := a.ExtractMode + " " + u.String()
	page, ok := f.cache.get(key)
	if !ok {
		if page, err = f.fetch(ctx, u, a.ExtractMode == "text"); err != nil {
			return tools.Result{}, err
		}
		if page.Status >= 200 && page.Status < 300 {
			f.cache.put(key, page)
		}
	}
	res := page
	res.Text, res.Truncated = cut(page.Text, a.MaxChars)
	res.Truncated = res.Truncated || page.Truncated
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // the model reads "&" and "<" in links and text, not \u0026
	if err := enc.Encode(res); err != nil {
		return tools.Result{}, fmt.Errorf("web_fetch: %w", err)
	}
	return tools.Result{Content: strings.TrimSuffix(out.String(), "\n"), IsError: res.Status >= 400}, nil
}

func (f *Fetch) checkArgs(a *fetchArgs) (*url.URL, error) {
	a.URL = strings.TrimSpace(a.URL)
	switch {
	case a.URL == "":
		return nil, errors.New(`"url" is required: the http or https address to fetch`)
	case a.ExtractMode == "":
		a.ExtractMode = "markdown"
	case a.ExtractMode != "markdown" && a.ExtractMode != "text":
		return nil, fmt.Errorf(`"extractMode" must be "markdown" or "text", not %q`, a.ExtractMode)
	}
	switch {
	case a.MaxChars == 0:
		a.MaxChars = f.cfg.MaxChars
	case a.MaxChars < 100 || a.MaxChars > MaxMaxChars:
		return nil, fmt.Errorf(`"maxChars" must be between 100 and %d`, MaxMaxChars)
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %v", a.URL, err)
	}
	u.Fragment, u.RawFragment = "", ""
	if err := f.cfg.Guard.CheckURL(u); err != nil {
		return nil, fmt.Errorf("web_fetch refused %s: %w", a.URL, err)
	}
	return u, nil
}

// fetch gets u and extracts its text in full (maxChars is applied by the caller, so the cache
// serves any maxChars).
func (f *Fetch) fetch(ctx context.Context, u *url.URL, plain bool) (fetchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fetchResult{}, fmt.Errorf("web_fetch: %w", err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; reef web_fetch)")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return fetchResult{}, fetchError(u, err, f.cfg.Timeout)
	}
	defer resp.Body.Close()
	res := fetchResult{URL: u.String(), FinalURL: resp.Request.URL.String(), Status: resp.StatusCode}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "" && !isText(mt) {
		return fetchResult{}, fmt.Errorf("web_fetch: %s is %s, not text: web_fetch reads HTML, text and JSON only", res.FinalURL, mt)
	}
	body, truncated, err := readBody(resp.Body, f.cfg.MaxBodyBytes)
	if err != nil {
		return fetchResult{}, fetchError(u, err, f.cfg.Timeout)
	}
	if mt == "" {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
		if !isText(mt) {
			return fetchResult{}, fmt.Errorf("web_fetch: %s looks like %s, not text: web_fetch reads HTML, text and JSON only", res.FinalURL, mt)
		}
	}
	body = decodeBody(body, mt, resp.Header.Get("Content-Type"))
	res.ContentType, res.Truncated = mt, truncated
	if mt == "text/html" || mt == "application/xhtml+xml" {
		if doc, err := html.Parse(bytes.NewReader(body)); err == nil {
			res.Title, res.Text = extractHTML(doc, resp.Request.URL, plain)
		} else { // nested deeper than the parser goes: the text without structure
			res.Title, res.Text = tokenText(body)
		}
	} else {
		res.Text = strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return res, nil
}

func fetchError(u *url.URL, err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("web_fetch refused %s: %w", u, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("web_fetch: %s did not answer within %s", u, timeout)
	}
	return fmt.Errorf("web_fetch: %w", err)
}

// isText reports whether a media type is one web_fetch returns.
func isText(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xhtml+xml",
		mt == "application/xml", mt == "application/javascript", mt == "application/x-javascript",
		mt == "application/ecmascript", mt == "application/x-ndjson", mt == "application/yaml",
		mt == "application/x-yaml", mt == "application/toml", mt == "application/x-sh",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return false
}

// readBody reads at most max bytes of r; truncated reports that r had more.
func readBody(r io.Reader, max int64) (body []byte, truncated bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, err
}

// cut keeps the first n characters of s.
func cut(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i], true
}

// decodeBody returns body as UTF-8. Its encoding is found as the WHATWG encoding rules say:
// a byte order mark, the Content-Type header's charset, and for HTML a <meta charset> or
// <meta http-equiv="Content-Type"> near its start (pages from China, Taiwan and Japan often
// declare GBK, GB2312, Big5 or Shift_JIS only there). A page that declares nothing is UTF-8
// when it is valid UTF-8, else Windows-1252, as browsers read it; other text that declares
// nothing is left as it is.
func decodeBody(body []byte, mt, contentType string) []byte {
	html := mt == "text/html" || mt == "application/xhtml+xml"
	head := body
	if !html {
		head = nil // only a byte order mark and the header count
		if len(body) >= 3 {
			head = body[:3]
		}
	} else if len(head) > metaScan {
		head = head[:metaScan]
	}
	enc, name, certain := charset.DetermineEncoding(head, contentType)
	switch {
	case name == "utf-8" || enc == nil:
		return body
	case !certain && (utf8.Valid(body) || !html) && name == "windows-1252":
		return body // the fallback guess, for a body that is UTF-8 after all (or is not HTML)
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}

// metaScan is how far into a page decodeBody looks for a <meta> charset. The standard says
// 1024 bytes; pages with long comments or scripts before it put it later, and browsers look
// further.
const metaScan = 4096

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}
