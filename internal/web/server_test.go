package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/messages"
)

// routes are every endpoint of the server (the SSE ones are checked on their own).
var routes = []struct{ method, path, ctype, body string }{
	{"GET", "/", "", ""},
	{"GET", "/sessions", "", ""},
	{"GET", "/sessions?q=webchat", "", ""},
	{"GET", "/sessions/view?key=agent:main:webchat:direct:owner", "", ""},
	{"GET", "/sessions/export?key=agent:main:webchat:direct:owner&format=jsonl", "", ""},
	{"GET", "/sessions/export?key=agent:main:webchat:direct:owner&format=md", "", ""},
	{"GET", "/live", "", ""},
	{"GET", "/cron", "", ""},
	{"POST", "/cron/run", "application/x-www-form-urlencoded", "id=job1"},
	{"POST", "/cron/disable", "application/x-www-form-urlencoded", "id=job1"},
	{"GET", "/pairing", "", ""},
	{"POST", "/pairing/approve", "application/x-www-form-urlencoded", "channel=telegram&code=ABCD2345"},
	{"GET", "/config", "", ""},
	{"POST", "/config/providers", "application/x-www-form-urlencoded", ""},
	{"GET", "/chat", "", ""},
	{"GET", "/chat/history", "", ""},
	{"POST", "/chat/send", "application/json", `{"text":"hi"}`},
	{"POST", "/logout", "", ""},
}

func TestEveryEndpointNeedsTheToken(t *testing.T) {
	r := newRig(t)
	wrong := 0 // wrong tokens sent: after limitFailures of them the address is locked out
	for _, rt := range append(routes, struct{ method, path, ctype, body string }{"GET", "/live/events", "", ""},
		struct{ method, path, ctype, body string }{"GET", "/chat/events", "", ""}) {
		resp := r.do(t, rt.method, rt.path, "", "", rt.ctype, rt.body)
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d, want 401", rt.method, rt.path, resp.StatusCode)
		}
		if !strings.Contains(body, `"error"`) {
			t.Errorf("%s %s without the token: body %q is no JSON error", rt.method, rt.path, body)
		}
		// a wrong Bearer token is no better
		req, _ := http.NewRequest(rt.method, r.ts.URL+rt.path, strings.NewReader(rt.body))
		req.Header.Set("Authorization", "Bearer "+testToken+"x")
		resp2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		wrong++
		want := http.StatusUnauthorized
		if wrong > limitFailures {
			want = http.StatusTooManyRequests
		}
		if resp2.StatusCode != want {
			t.Errorf("%s %s with wrong token number %d: %d, want %d", rt.method, rt.path, wrong, resp2.StatusCode, want)
		}
	}
	if got := r.backend.recorded(); len(got) != 0 {
		t.Errorf("unauthenticated requests changed things: %v", got)
	}
	// A browser asking for a page gets the login form, still with 401.
	req, _ := http.NewRequest("GET", r.ts.URL+"/sessions", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 401 || !strings.Contains(body, `name="token"`) || !strings.Contains(body, `value="/sessions"`) {
		t.Errorf("browser without login: %d %q", resp.StatusCode, body)
	}
}

func TestEveryEndpointWithTheToken(t *testing.T) {
	r := newRig(t)
	for _, rt := range routes {
		resp := r.do(t, rt.method, rt.path, "bearer", "", rt.ctype, rt.body)
		body := readAll(t, resp)
		if resp.StatusCode >= 400 {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, resp.StatusCode, body)
		}
		if strings.Contains(body, canary) || strings.Contains(body, testToken) {
			t.Errorf("%s %s: a secret in the response:\n%s", rt.method, rt.path, body)
		}
		if got := resp.Header.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'none'") || strings.Contains(got, "unsafe-inline") {
			t.Errorf("%s %s: CSP %q", rt.method, rt.path, got)
		}
	}
	want := []string{"cron run job1", "cron disable job1", "pairing approve telegram ABCD2345", "probe providers"}
	if got := r.backend.recorded(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("changes: got %v, want %v", got, want)
	}
	select {
	case in := <-r.inbound:
		if in.Text != "hi" || in.SenderID != webchat.SenderID || in.ChatID != webchat.ChatID {
			t.Errorf("chat delivered %+v", in)
		}
	case <-time.After(20 * time.Second):
		t.Error("the chat message was not delivered")
	}
}

func TestConversationView(t *testing.T) {
	r := newRig(t)
	body := readAll(t, r.do(t, "GET", "/sessions/view?key=agent:main:webchat:direct:owner", "bearer", "", "", ""))
	for _, want := range []string{
		`<details class="toolcall">`, "tool <b>ls</b>", "notes.txt", // the call with its result
		`&lt;b&gt;There is&lt;/b&gt;`,                                            // the model's text, escaped
		`class="subagent" href="/sessions/view?key=agent%3amain%3asubagent%3a1"`, // the child as a link
		"new session", // the reset
	} {
		if !strings.Contains(body, want) {
			t.Errorf("conversation view lacks %q", want)
		}
	}
	if resp := r.do(t, "GET", "/sessions/export?key=agent:main:webchat:direct:owner&format=md", "bearer", "", "", ""); resp.Header.Get("Content-Disposition") == "" {
		t.Error("export is not a download")
	}
}

func TestLoginCookieAndCSRF(t *testing.T) {
	r := newRig(t)
	form := func(v url.Values) *http.Response {
		return r.do(t, "POST", "/login", "", "", "application/x-www-form-urlencoded", v.Encode())
	}
	if resp := form(url.Values{"token": {"wrong"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d", resp.StatusCode)
	}
	resp := form(url.Values{"token": {testToken}, "next": {"//evil.example/"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("login: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == cookieName {
			c = ck
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, testToken) {
		t.Fatalf("session cookie %+v", c)
	}
	if resp := r.do(t, "GET", "/", "cookie", "", "", ""); resp.StatusCode != 200 {
		t.Errorf("page with the cookie: %d", resp.StatusCode)
	}
	post := "channel=telegram&code=ABCD2345"
	for _, csrf := range []string{"", "wrong", r.srv.auth.session()} {
		resp := r.do(t, "POST", "/pairing/approve", "cookie", csrf, "application/x-www-form-urlencoded", post)
		if body := readAll(t, resp); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, `"error"`) {
			t.Errorf("cookie POST with CSRF %q: %d %s, want 403", csrf, resp.StatusCode, body)
		}
	}
	if resp := r.do(t, "POST", "/chat/send", "cookie", "", "application/json", `{"text":"x"}`); resp.StatusCode != http.StatusForbidden {
		t.Errorf("chat send without CSRF: %d, want 403", resp.StatusCode)
	}
	if got := r.backend.recorded(); len(got) != 0 {
		t.Errorf("requests without a CSRF token changed things: %v", got)
	}
	// The form's field and the header both work.
	if resp := r.do(t, "POST", "/pairing/approve", "cookie", "", "application/x-www-form-urlencoded", post+"&csrf="+url.QueryEscape(r.srv.auth.csrf())); resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
		t.Errorf("cookie POST with the form's CSRF token: %d", resp.StatusCode)
	}
	if resp := r.do(t, "POST", "/cron/run", "cookie", r.srv.auth.csrf(), "application/x-www-form-urlencoded", "id=job1"); resp.StatusCode != http.StatusOK {
		t.Errorf("cookie POST with the CSRF header: %d", resp.StatusCode)
	}
}

func TestHealthAndReadyAreOpen(t *testing.T) {
	r := newRig(t)
	for _, p := range []string{"/healthz", "/readyz", "/assets/app.js", "/assets/app.css", "/login"} {
		if resp := r.do(t, "GET", p, "", "", "", ""); resp.StatusCode != 200 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
	srv, err := New(Config{Listen: "127.0.0.1:0", Token: testToken, Backend: &fakeBackend{},
		Ready: func() error { return fmt.Errorf("2 of 3 channels started") }}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "2 of 3") {
		t.Errorf("readyz when not ready: %d %s", rec.Code, rec.Body)
	}
}

func TestBadInputGets4xxWithJSON(t *testing.T) {
	r := newRig(t)
	huge := `{"text":"` + strings.Repeat("a", 20<<20) + `"}`
	for _, tt := range []struct {
		method, path, ctype, body string
		want                      int
	}{
		{"POST", "/chat/send", "application/json", `{"text":`, 400},
		{"POST", "/chat/send", "application/json", `{"message":"hi"}`, 400},
		{"POST", "/chat/send", "application/json", `{}`, 400},
		{"POST", "/chat/send", "application/json", `{"text":"   "}`, 400},
		{"POST", "/chat/send", "application/json", `{"text":"` + strings.Repeat("a", 40<<10) + `"}`, 413},
		{"POST", "/chat/send", "application/json", huge, 413},
		{"POST", "/cron/explode", "application/x-www-form-urlencoded", "id=job1", 400},
		{"POST", "/cron/run", "application/x-www-form-urlencoded", "", 400},
		{"POST", "/cron/run", "application/x-www-form-urlencoded", "id=nope", 404},
		{"POST", "/pairing/approve", "application/x-www-form-urlencoded", "channel=telegram", 400},
		{"POST", "/pairing/approve", "application/x-www-form-urlencoded", "channel=telegram&code=WRONG", 404},
		{"POST", "/pairing/maybe", "application/x-www-form-urlencoded", "channel=telegram&code=ABCD2345", 400},
		{"GET", "/sessions/view", "", "", 400},
		{"GET", "/sessions/view?key=nope", "", "", 404},
		{"GET", "/sessions/export?key=agent:main:webchat:direct:owner&format=pdf", "", "", 400},
		{"GET", "/nothing/here", "", "", 404},
	} {
		resp := r.do(t, tt.method, tt.path, "bearer", "", tt.ctype, tt.body)
		body := readAll(t, resp)
		var e struct{ Error string }
		if resp.StatusCode != tt.want || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
			t.Errorf("%s %s %.40q: %d %.200s, want %d with a JSON error", tt.method, tt.path, tt.body, resp.StatusCode, body, tt.want)
		}
	}
	if got := r.backend.recorded(); len(got) != 0 {
		t.Errorf("bad requests changed things: %v", got)
	}
	select {
	case in := <-r.inbound:
		t.Errorf("a bad message was delivered: %.80q", in.Text)
	default:
	}
}

func TestPublicListenWithoutTokenRefused(t *testing.T) {
	for _, cfg := range []Config{
		{Listen: "0.0.0.0:0", Backend: &fakeBackend{}},
		{Listen: "0.0.0.0:0", Token: "short", Backend: &fakeBackend{}},
		{Listen: "127.0.0.1:0", Backend: &fakeBackend{}},
	} {
		if _, err := New(cfg, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "REEF_GATEWAY_TOKEN") {
			t.Errorf("New(%q, token %q) = %v, want a refusal naming REEF_GATEWAY_TOKEN", cfg.Listen, cfg.Token, err)
		}
	}
	if _, err := New(Config{Listen: "0.0.0.0:0", Token: testToken, Backend: &fakeBackend{}}, zerolog.Nop()); err != nil {
		t.Errorf("public with a token: %v", err)
	}
}

func TestMountedHandlersAreBehindTheToken(t *testing.T) {
	srv, err := New(Config{Listen: "127.0.0.1:0", Token: testToken, Backend: &fakeBackend{}}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up 1\n") }))
	srv.Mount("/v1/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "v1") }))
	for _, tt := range []struct {
		method, path, auth string
		want               int
	}{
		{"GET", "/metrics", "", 401},
		{"GET", "/metrics", "Bearer " + testToken, 200},
		{"POST", "/v1/chat/completions", "", 401},
		{"POST", "/v1/chat/completions", "Bearer " + testToken, 200},
	} {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s %s (%q): %d, want %d", tt.method, tt.path, tt.auth, rec.Code, tt.want)
		}
	}
}

// sseReader reads named events from a stream.
type sseReader struct{ sc *bufio.Scanner }

func (s sseReader) next(t *testing.T) (event, data string) {
	t.Helper()
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return event, data
		}
	}
	t.Fatalf("stream ended: %v", s.sc.Err())
	return "", ""
}

func (r *rig) stream(t *testing.T, path string) sseReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", r.ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // the opening comment: subscribed
	return sseReader{sc}
}

func TestLiveStreamsRunEventsRedacted(t *testing.T) {
	r := newRig(t)
	s := r.stream(t, "/live/events?session=s1")
	r.bus.Publish(messages.RunEvent{Session: "s2", Kind: messages.RunToolStart, Name: "other"})
	r.bus.Publish(messages.RunEvent{Session: "s1", Kind: messages.RunTextDelta, Text: "key " + canary})
	ev, data := s.next(t)
	if ev != "run" || !strings.Contains(data, `"session":"s1"`) || strings.Contains(data, canary) || !strings.Contains(data, "[redacted]") {
		t.Errorf("live event %s %s", ev, data)
	}
}

func TestChatStreamsRepliesProgressAndText(t *testing.T) {
	r := newRig(t)
	s := r.stream(t, "/chat/events")
	const key = "agent:main:webchat:direct:owner"
	r.chat.Progress(context.Background(), messages.TurnEvent{SessionKey: key, ChatID: "owner", Kind: messages.TurnStarted})
	if ev, data := s.next(t); ev != "chat" || !strings.Contains(data, `"started"`) {
		t.Fatalf("got %s %s", ev, data)
	}
	r.chat.Progress(context.Background(), messages.TurnEvent{SessionKey: key, ChatID: "owner", Kind: messages.ToolStarted, Label: "ls ."})
	r.bus.Publish(messages.RunEvent{Session: key, Kind: messages.RunTextDelta, Text: "Here "})
	r.bus.Publish(messages.RunEvent{Session: "someone else", Kind: messages.RunTextDelta, Text: "not mine"})
	r.chat.Send(context.Background(), messages.Outbound{SessionKey: key, ChatID: "owner", Text: "Here you are"})
	var got []string
	for len(got) < 3 {
		ev, data := s.next(t)
		got = append(got, ev+" "+data)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{`chat {"kind":"progress","text":"ls ."`, `delta {"text":"Here "}`, `chat {"kind":"reply","text":"Here you are"`} {
		if !strings.Contains(all, want) {
			t.Errorf("stream lacks %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "not mine") {
		t.Errorf("another session's text reached the chat:\n%s", all)
	}
}
