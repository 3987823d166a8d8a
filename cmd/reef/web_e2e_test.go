package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// webGateway is a `reef gateway` child with its web UI on a free port, a fake Telegram
// (for pairing requests) and reef's own fake model (fake-llm's replies: "ls" lists the
// workspace, "delegate ..." spawns a sub-agent).
type webGateway struct {
	*gateway
	env   env
	home  string
	url   string // http://127.0.0.1:port (no trailing slash)
	token string
	tg    *telegramtest.Server
	llm   *openaitest.Server
}

func startWebGateway(t *testing.T) *webGateway {
	t.Helper()
	script := fake.NewScript()
	script.Models = []string{"test-model"}
	script.Respond = fakeReply
	llm := openaitest.NewServer(script)
	t.Cleanup(llm.Close)
	tg := telegramtest.New(t)
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "channels:\n  telegram:\n    botToken: " + telegramtest.Token + "\n    apiRoot: " + tg.URL + "\n" +
		"models:\n  openai/test-model:\n    vision: true\n" // WebChat's image upload reaches the model as an image
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &webGateway{env: withFake(home, llm), home: home, tg: tg, llm: llm}
	w.launch(t)
	return w
}

var webURLLine = regexp.MustCompile(`"url":"(http://127\.0\.0\.1:\d+)/","[^}]*"web UI listening"`)

// launch starts (or restarts) the gateway and reads where its web UI listens.
func (w *webGateway) launch(t *testing.T) {
	t.Helper()
	w.gateway = launchGateway(t, w.env)
	m := webURLLine.FindStringSubmatch(w.stderr.String())
	if m == nil {
		t.Fatalf("no web UI address in the log:\n%s", w.stderr)
	}
	w.url, w.token = m[1], web.ReadToken(filepath.Join(w.home, "data"))
	if w.token == "" {
		t.Fatal("no generated token in the data directory")
	}
}

// get fetches path with the token and returns the status and body.
func (w *webGateway) get(t *testing.T, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", w.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+w.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (w *webGateway) post(t *testing.T, path, ctype, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", w.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+w.token)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// chatHistory is /chat/history.
func (w *webGateway) chatHistory(t *testing.T) (session string, lines []string) {
	t.Helper()
	return w.chatHistoryOf(t, "")
}

// chatHistoryOf is /chat/history of the conversation chat ("": the first).
func (w *webGateway) chatHistoryOf(t *testing.T, chat string) (session string, lines []string) {
	t.Helper()
	code, body := w.get(t, "/chat/history?c="+chat)
	if code != 200 {
		t.Fatalf("/chat/history: %d %s", code, body)
	}
	var h struct {
		Session string
		Items   []struct{ Kind, Text string }
	}
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	for _, it := range h.Items {
		lines = append(lines, it.Kind+": "+it.Text)
	}
	return h.Session, lines
}

// TestWebUIEndToEnd: the real gateway's web face. A token is generated (0600, logged once,
// shown by reef status); WebChat runs the agent with its tools and keeps the conversation
// across a restart; every page opens, and the API key never shows on any.
func TestWebUIEndToEnd(t *testing.T) {
	w := startWebGateway(t)
	fi, err := os.Stat(filepath.Join(w.home, "data", web.TokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	if n := strings.Count(w.stderr.String(), w.token); n != 1 {
		t.Errorf("the generated token is in the log %d times, want once", n)
	}
	if st := reef(t, w.env, "", "status"); !strings.Contains(st.stdout, "web UI: "+w.url+"/ (token: "+w.token+")") {
		t.Errorf("reef status does not show the web UI and its token:\n%s%s", st.stdout, st.stderr)
	}

	if code, body := w.post(t, "/chat/send", "application/json", `{"text":"ls"}`); code != 202 {
		t.Fatalf("chat send: %d %s", code, body)
	}
	waitUntil(t, "the agent's answer in the chat history", func() bool {
		_, lines := w.chatHistory(t)
		return len(lines) >= 3 && strings.HasPrefix(lines[len(lines)-1], "assistant: Done.")
	})
	session, before := w.chatHistory(t)
	if session != "agent:main:webchat:direct:owner" || before[0] != "user: ls" || before[1] != "progress: ls ." { // the tool line keeps its argument
		t.Errorf("history of %q: %q", session, before)
	}

	// The OpenAI-compatible API and /metrics are mounted on the same listener, behind the token.
	if code, body := w.get(t, "/v1/models"); code != 200 || !strings.Contains(body, `"reef/main"`) {
		t.Errorf("/v1/models: %d %s", code, body)
	} else if doc := apiDocModels(t); !sameShape(t, doc, body) { // api.md's example is what a default reef answers
		t.Errorf("docs/api.md's /v1/models example:\n%s\nthe gateway answers:\n%s", doc, body)
	}
	if code, body := w.post(t, "/v1/chat/completions", "application/json",
		`{"model":"reef/main","user":"e2e","messages":[{"role":"user","content":"ls"}]}`); code != 200 ||
		!strings.Contains(body, `"chat.completion"`) || !strings.Contains(body, `"usage"`) {
		t.Errorf("/v1/chat/completions: %d %s", code, body)
	}
	if code, body := w.get(t, "/metrics"); code != 200 || !strings.Contains(body, "reef_messages_in_total") {
		t.Errorf("/metrics: %d %.500s", code, body)
	}
	for _, p := range []string{"/v1/models", "/metrics"} {
		resp, err := http.Get(w.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %s, want 401", p, resp.Status)
		}
	}

	w.tg.UserSays(4242, 4242, "hello?") // a pairing request
	waitSent(t, w.tg, 4242, 1)
	pages := []string{"/", "/sessions", "/sessions/view?key=" + session, "/sessions/export?key=" + session + "&format=jsonl",
		"/sessions/export?key=" + session + "&format=md", "/live", "/cron", "/pairing", "/config", "/chat", "/chat/history"}
	for _, p := range pages {
		code, body := w.get(t, p)
		if code != 200 {
			t.Errorf("%s: %d %.300s", p, code, body)
		}
		if strings.Contains(body, canary) {
			t.Errorf("%s shows the API key", p)
		}
	}
	if _, body := w.get(t, "/config"); !strings.Contains(body, "[redacted]") || !strings.Contains(body, "telegram") {
		t.Errorf("config page: %.2000s", body)
	}
	if _, body := w.get(t, "/pairing"); !strings.Contains(body, "4242") {
		t.Errorf("the pairing request is not listed: %.2000s", body)
	}

	if code := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	w.launch(t)
	if strings.Contains(w.stderr.String(), w.token) {
		t.Error("the token was logged again after a restart")
	}
	if _, after := w.chatHistory(t); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("history after a restart:\n%q\nbefore:\n%q", after, before)
	}

	// Cron through the web: disable, enable, run now and remove a job `reef cron add` made.
	if res := reef(t, w.env, "", "cron", "add", "-name", "webjob", "-cron", "0 9 * * *", "-text", "check the plants"); res.code != 0 {
		t.Fatalf("reef cron add: %s%s", res.stdout, res.stderr)
	}
	jobs := func() string { return reef(t, w.env, "", "cron", "list", "-json").stdout }
	m := regexp.MustCompile(`"id":\s*"([^"]+)"`).FindStringSubmatch(jobs())
	if m == nil {
		t.Fatalf("no job id in %s", jobs())
	}
	if _, body := w.get(t, "/cron"); !strings.Contains(body, "webjob") {
		t.Errorf("the cron page lacks the job: %.2000s", body)
	}
	for _, action := range []string{"disable", "enable", "run", "remove"} {
		if code, body := w.post(t, "/cron/"+action, "application/x-www-form-urlencoded", "id="+m[1]); code != 200 {
			t.Errorf("cron %s: %d %s", action, code, body)
		}
		if action == "disable" && !strings.Contains(jobs(), `"enabled":false`) {
			t.Errorf("after disable: %s", jobs())
		}
	}
	if strings.Contains(jobs(), m[1]) {
		t.Errorf("the removed job is still listed: %s", jobs())
	}

	// /new: the greeting shows after a reload, reef's instruction to the model never does.
	if code, body := w.post(t, "/chat/send", "application/json", `{"text":"/new"}`); code != 202 {
		t.Fatalf("chat send /new: %d %s", code, body)
	}
	waitUntil(t, "the greeting in the chat history", func() bool {
		_, lines := w.chatHistory(t)
		return strings.HasPrefix(lines[len(lines)-1], "assistant: Hello!")
	})
	if _, lines := w.chatHistory(t); strings.Contains(strings.Join(lines, "\n"), "[New session]") ||
		strings.Contains(strings.Join(lines, "\n"), "A new session was started") {
		t.Errorf("the chat history shows reef's new-session instruction:\n%q", lines)
	}
	noCanary(t, w.home, w.llm, w.stdout.String(), w.stderr.String())
}

// TestPublicListenWithoutTokenIsRefused: a listener other machines can reach needs a token;
// the gateway does not start and says how to fix it.
func TestPublicListenWithoutTokenIsRefused(t *testing.T) {
	home := newHome(t)
	e := withFake(home, newFake(t))
	e["REEF_GATEWAY_LISTEN"] = "0.0.0.0:0"
	res := reef(t, e, "", "gateway")
	if res.code == 0 || !strings.Contains(res.stderr, "REEF_GATEWAY_TOKEN") || !strings.Contains(res.stderr, "gateway.http.listen") {
		t.Errorf("reef gateway on 0.0.0.0 without a token = %d\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "data", web.TokenFile)); err == nil {
		t.Error("a token was generated for a refused listener")
	}
}

// apiDocModels is the answer docs/api.md shows for GET /v1/models (the comment line after
// its curl).
func apiDocModels(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "/v1/models -H")
	if !ok {
		t.Fatal("docs/api.md shows no curl of /v1/models")
	}
	_, rest, _ = strings.Cut(rest, "\n# ")
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

// sameShape reports whether two JSON texts have the same keys everywhere and the same
// values, "created" (a time) aside.
func sameShape(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Errorf("not JSON: %s: %v", a, err)
		return false
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Errorf("not JSON: %s: %v", b, err)
		return false
	}
	var norm func(v any) any
	norm = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				v[k] = norm(x)
			}
			if _, ok := v["created"]; ok {
				v["created"] = 0
			}
		case []any:
			for i, x := range v {
				v[i] = norm(x)
			}
		}
		return v
	}
	return reflect.DeepEqual(norm(va), norm(vb))
}
