package actors_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/internal/openaiapi"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// apiRig is the actor tree with the API's channel, and an httptest server mounting the
// API's handler, as the gateway's listener does.
type apiRig struct {
	*harness
	srv    *httptest.Server
	script *fakellm.Script
}

// newAPIRig answers every model call with the last user message, the number of user
// messages the model saw (so a session's continuation shows) and fixed usage.
func newAPIRig(t *testing.T, hooks ...func(*actors.Deps)) *apiRig {
	t.Helper()
	return newAPIRigWith(t, apiRigOpts{}, hooks...)
}

// apiRigOpts change newAPIRig's rig before it starts.
type apiRigOpts struct {
	api     func(*openaiapi.Config)             // the API's configuration (keys, a token)
	respond func(fakellm.Request) fakellm.Reply // the model, instead of the echo
}

// newAPIRigWith is newAPIRig changed by opts.
func newAPIRigWith(t *testing.T, opts apiRigOpts, hooks ...func(*actors.Deps)) *apiRig {
	t.Helper()
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		var users []string
		for _, m := range r.Messages {
			if m.Role == messages.RoleUser {
				users = append(users, m.Content)
			}
		}
		last := ""
		if len(users) > 0 {
			last = users[len(users)-1]
			if i := strings.LastIndex(last, "\n"); i >= 0 { // past the inbound metadata
				last = last[i+1:]
			}
		}
		text := fmt.Sprintf("echo %s (message %d)", last, len(users))
		if last == "recall" { // what the model saw: each message's role and its last line
			var saw []string
			for _, m := range r.Messages {
				line := m.Content[strings.LastIndex(m.Content, "\n")+1:]
				saw = append(saw, string(m.Role)+"="+line)
			}
			text = strings.Join(saw, " | ")
		}
		if last == "lines" { // several lines: streamed a line at a time
			text = "one\ntwo\nthree"
		}
		return fakellm.Reply{Text: text,
			Usage: messages.Usage{InputTokens: 11, OutputTokens: 5}}
	}
	if opts.respond != nil {
		script.Respond = opts.respond
	}
	ch := openaiapi.NewChannel(testutil.Logger(t))
	bus := events.NewBus()
	t.Cleanup(bus.Close)
	h := newHarness(t, harnessOpts{script: script, depsHook: func(d *actors.Deps) {
		d.Events = bus
		d.Channels[openaiapi.Name] = ch
		a := d.Agents[0]
		d.Agents = append(d.Agents, &actors.Agent{ID: "work", Name: "Work", Workspace: t.TempDir(), Model: a.Model,
			Provider: a.Provider, Tools: a.Tools, Policy: a.Policy, ContextWindow: a.ContextWindow})
		for _, h := range hooks {
			h(d)
		}
	}})
	cfg := openaiapi.Config{Channel: ch, Agents: []openaiapi.Agent{{ID: "main"}, {ID: "work"}},
		Events: bus, HasTool: h.rt.HasTool, Log: testutil.Logger(t)}
	if opts.api != nil {
		opts.api(&cfg)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", openaiapi.New(cfg))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &apiRig{harness: h, srv: srv, script: script}
}

func (r *apiRig) post(t *testing.T, body string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func (r *apiRig) sessions(t *testing.T) []string {
	t.Helper()
	var keys []string
	err := r.store.View(func(rd persistence.Reader) error {
		infos, err := rd.Sessions()
		for _, i := range infos {
			keys = append(keys, i.Key)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

type apiCompletion struct {
	Choices []struct {
		Message struct{ Role, Content string }
	}
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
}

// The API runs the agent through the runtime: the answer, its usage, the session continued
// by user, kept apart per user and per agent, the transcript stored, owner's tools offered.
func TestOpenAIAPIRunsAgent(t *testing.T) {
	r := newAPIRig(t)
	ask := func(model, user, text string) apiCompletion {
		t.Helper()
		status, hdr, body := r.post(t, fmt.Sprintf(`{"model":%q,"user":%q,"messages":[{"role":"user","content":%q}]}`, model, user, text))
		if status != 200 {
			t.Fatalf("%s %s %q: %d %s", model, user, text, status, body)
		}
		if want := "agent:" + strings.TrimPrefix(model, "reef/") + ":openai:direct:" + user; hdr.Get(openaiapi.SessionKeyHeader) != want {
			t.Errorf("session key %q, want %q", hdr.Get(openaiapi.SessionKeyHeader), want)
		}
		var c apiCompletion
		if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("completion %s: %v", body, err)
		}
		return c
	}
	c := ask("reef/main", "ann", "hello")
	if got := c.Choices[0].Message.Content; got != "echo hello (message 1)" {
		t.Fatalf("first answer %q", got)
	}
	if c.Usage.PromptTokens != 11 || c.Usage.CompletionTokens != 5 || c.Usage.TotalTokens != 16 {
		t.Errorf("usage %+v, want 11 + 5 = 16", c.Usage)
	}
	if got := ask("reef/main", "ann", "again").Choices[0].Message.Content; got != "echo again (message 2)" {
		t.Errorf("same user, second answer %q: the session did not continue", got)
	}
	if got := ask("reef/main", "bob", "hi").Choices[0].Message.Content; got != "echo hi (message 1)" {
		t.Errorf("another user %q: sessions are not kept apart", got)
	}
	if got := ask("reef/work", "ann", "hi").Choices[0].Message.Content; got != "echo hi (message 1)" {
		t.Errorf("another agent %q", got)
	}
	key := "agent:main:openai:direct:ann"
	var entries []persistence.Entry
	if err := r.store.View(func(rd persistence.Reader) (err error) { entries, err = rd.Messages(key, 0); return err }); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[3].Content != "echo again (message 2)" {
		t.Errorf("transcript of %s: %d entries %+v", key, len(entries), entries)
	}
	reqs := r.script.Requests()
	if !slices.Contains(reqs[0].Tools, "exec") {
		t.Errorf("the API's caller holds the gateway token, so is the owner: tools offered %v", reqs[0].Tools)
	}
	// A streamed request continues the same session; it asks for the usage chunk.
	status, _, body := r.post(t, `{"model":"reef/main","user":"ann","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"more"}]}`)
	if status != 200 || streamedContent(t, body) != "echo more (message 3)" || !strings.Contains(body, `"total_tokens":16`) ||
		!strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("stream: %d %s", status, body)
	}
}

// Bad requests are refused before anything reaches the runtime: no session, no model call.
func TestOpenAIAPIBadInputStoresNothing(t *testing.T) {
	r := newAPIRig(t)
	ok := `[{"role":"user","content":"hi"}]`
	bad := []struct {
		body   string
		header []string
		status int
	}{
		{`{"model":"reef/main","messages":`, nil, 400},
		{`{"model":"reef/main","messages":[{"role":"user","content":"` + strings.Repeat("x", 20<<20) + `"}]}`, nil, 413},
		{`{"model":"reef/nope","messages":` + ok + `}`, nil, 404},
		{`{"model":"reef/main"}`, nil, 400},
		{`{"model":"reef/main","messages":` + ok + `}`, []string{openaiapi.SessionHeader, "agent:main:fake:direct:42"}, 403},
		{`{"model":"reef/main","messages":` + ok + `}`, []string{openaiapi.SessionHeader, "agent:work:openai:direct:ann"}, 403},
	}
	for _, b := range bad {
		status, _, body := r.post(t, b.body, b.header...)
		if status != b.status || !strings.Contains(body, `"error"`) {
			t.Errorf("%.60s: %d %s, want %d", b.body, status, body, b.status)
		}
	}
	if keys := r.sessions(t); len(keys) != 0 {
		t.Errorf("bad requests stored sessions %v", keys)
	}
	if n := len(r.script.Requests()); n != 0 {
		t.Errorf("bad requests made %d model calls", n)
	}
}

// A streamed answer shows the agent's text as the model writes it, a line at a time, and
// the chunks add up to the answer.
func TestOpenAIAPIStreamsLive(t *testing.T) {
	r := newAPIRig(t)
	status, _, body := r.post(t, `{"model":"reef/main","user":"live","stream":true,"messages":[{"role":"user","content":"lines"}]}`)
	if status != 200 {
		t.Fatalf("stream: %d %s", status, body)
	}
	var parts []string
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content *string }
			}
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil && *ch.Delta.Content != "" {
				parts = append(parts, *ch.Delta.Content)
			}
		}
	}
	if got := strings.Join(parts, ""); got != "one\ntwo\nthree" || len(parts) < 3 {
		t.Errorf("streamed %q in %d chunks %q, want the answer a line at a time", got, len(parts), parts)
	}
}

// streamedContent joins the content deltas of a streamed chat completion (the text comes a
// word at a time).
func streamedContent(t *testing.T, body string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("a chunk that is not JSON: %q", data)
		}
		for _, c := range chunk.Choices {
			out.WriteString(c.Delta.Content)
		}
	}
	return out.String()
}

// A request naming no session is stateless: the model sees the agent's prompt and the
// client's messages (its system prompt and history), nothing of any stored session, and
// nothing of it is stored. Two at once do not mix.
func TestOpenAIAPIStateless(t *testing.T) {
	r := newAPIRig(t)
	if status, _, body := r.post(t, `{"model":"reef/main","user":"ann","messages":[{"role":"user","content":"secret plan"}]}`); status != 200 {
		t.Fatalf("durable: %d %s", status, body)
	}
	stateless := func(name string) string {
		return fmt.Sprintf(`{"model":"reef/main","messages":[
			{"role":"system","content":"You are terse."},
			{"role":"user","content":"My name is %s."},
			{"role":"assistant","content":"Hello %s."},
			{"role":"user","content":"recall"}]}`, name, name)
	}
	status, hdr, body := r.post(t, stateless("Ann"))
	if status != 200 {
		t.Fatalf("stateless: %d %s", status, body)
	}
	var c apiCompletion
	if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("completion %s: %v", body, err)
	}
	want := "system=You are terse. | user=My name is Ann. | assistant=Hello Ann. | user=recall"
	if got := c.Choices[0].Message.Content; got != want {
		t.Errorf("the model saw %q, want %q", got, want)
	}
	if k := hdr.Get(openaiapi.SessionKeyHeader); k != "" {
		t.Errorf("a stateless answer names the session %q, which is gone", k)
	}
	if keys := r.sessions(t); !slices.Equal(keys, []string{"agent:main:openai:direct:ann"}) {
		t.Errorf("sessions stored %v, want only ann's", keys)
	}
	var entries []persistence.Entry
	if err := r.store.View(func(rd persistence.Reader) (err error) {
		entries, err = rd.Messages("agent:main:openai:direct:ann", 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("ann's transcript has %d entries, want her 2", len(entries))
	}

	answers := make(chan string, 2)
	for _, name := range []string{"Bob", "Cy"} {
		go func() {
			_, _, body := r.post(t, stateless(name))
			answers <- body
		}()
	}
	for range 2 {
		body := <-answers
		if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("completion %s: %v", body, err)
		}
		got := c.Choices[0].Message.Content
		bob, cy := strings.Contains(got, "Bob"), strings.Contains(got, "Cy")
		if bob == cy || strings.Count(got, "user=") != 2 {
			t.Errorf("two stateless requests at once mixed: %q", got)
		}
	}
	// A command is text in a stateless chat: its session has no future for /new or /model to act on.
	status, _, body = r.post(t, `{"model":"reef/main","messages":[{"role":"user","content":"/status"}]}`)
	if err := json.Unmarshal([]byte(body), &c); status != 200 || err != nil || c.Choices[0].Message.Content != "echo /status (message 1)" {
		t.Errorf("stateless /status: %d %s", status, body)
	}
	waitFor(t, func() bool { return r.rt.LiveSessions() == 1 }) // ann's; the stateless ones unloaded
	if keys := r.sessions(t); len(keys) != 1 {
		t.Errorf("sessions stored %v, want only ann's", keys)
	}
}

// An image_url part reaches a vision model as a platform's photo does: saved into the agent's
// workspace, its bytes in the model's request. A model without vision is told where it is.
func TestOpenAIAPIImages(t *testing.T) {
	r := newAPIRig(t, func(d *actors.Deps) { d.Agents[0].Vision = true })
	png := []byte("\x89PNG\r\n\x1a\n a tiny cat")
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	body := func(model, user string) string {
		return fmt.Sprintf(`{"model":%q,"user":%q,"messages":[{"role":"user","content":[
			{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":%q}}]}]}`, model, user, url)
	}
	for _, model := range []string{"reef/main", "reef/work"} {
		if status, _, b := r.post(t, body(model, "ann")); status != 200 {
			t.Fatalf("%s: %d %s", model, status, b)
		}
	}
	reqs := r.script.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	images := func(req fakellm.Request) (data []byte, text string) {
		m := req.Messages[len(req.Messages)-1]
		for _, md := range m.Media {
			data = append(data, md.Data...)
		}
		return data, m.Content
	}
	if data, text := images(reqs[0]); !bytes.Equal(data, png) || !strings.Contains(text, "[image: inbox/") {
		t.Errorf("the vision model got %d image bytes (want %d) and the text %q", len(data), len(png), text)
	}
	if data, text := images(reqs[1]); len(data) != 0 || !strings.Contains(text, "[image: inbox/") {
		t.Errorf("the model without vision got %d image bytes and the text %q, want a note of the file", len(data), text)
	}
}

// max_tokens (or max_completion_tokens, which wins) caps each model call of the run it asks
// for, and only that run; n > 1 and a response_format other than text are refused.
func TestOpenAIAPIOptions(t *testing.T) {
	r := newAPIRig(t)
	for _, opts := range []string{`"max_tokens":77`, `"max_tokens":9,"max_completion_tokens":5`, `"temperature":0.2,"stop":["x"],"n":1,"response_format":{"type":"text"}`} {
		if status, _, b := r.post(t, `{"model":"reef/main","user":"ann",`+opts+`,"messages":[{"role":"user","content":"hi"}]}`); status != 200 {
			t.Fatalf("%s: %d %s", opts, status, b)
		}
	}
	var caps []int
	for _, req := range r.script.Requests() {
		caps = append(caps, req.MaxTokens)
	}
	if !slices.Equal(caps, []int{77, 5, 0}) {
		t.Errorf("the model calls' output caps %v, want 77, 5, then the model's own (0)", caps)
	}
	for _, opts := range []string{`"n":2`, `"response_format":{"type":"json_object"}`, `"max_tokens":0`} {
		if status, _, b := r.post(t, `{"model":"reef/main","user":"ann",`+opts+`,"messages":[{"role":"user","content":"hi"}]}`); status != 400 {
			t.Errorf("%s: %d %s, want 400", opts, status, b)
		}
	}
}

// An Open WebUI-shaped sequence: list the models, chat in a named session, then the title
// request Open WebUI makes in the background (the chat's messages and an instruction, no
// user): it is answered from its own messages and does not enter the chat's session.
func TestOpenAIAPIOpenWebUISequence(t *testing.T) {
	r := newAPIRig(t)
	resp, err := http.Get(r.srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("models: %d", resp.StatusCode)
	}
	chat := func(text string) string {
		t.Helper()
		status, _, body := r.post(t, fmt.Sprintf(`{"model":"reef/main","stream":true,"messages":[{"role":"user","content":%q}]}`, text),
			openaiapi.SessionHeader, "owui-chat-1")
		if status != 200 {
			t.Fatalf("chat: %d %s", status, body)
		}
		return streamedContent(t, body)
	}
	if got := chat("hello"); got != "echo hello (message 1)" {
		t.Fatalf("chat: %q", got)
	}
	status, _, body := r.post(t, `{"model":"reef/main","stream":false,"messages":[
		{"role":"user","content":"hello"},{"role":"assistant","content":"echo hello (message 1)"},
		{"role":"user","content":"### Task:\nGenerate a concise title for the chat above.\nrecall"}]}`)
	if status != 200 || !strings.Contains(body, "assistant=echo hello (message 1)") {
		t.Fatalf("title: %d %s", status, body)
	}
	if got := chat("more"); got != "echo more (message 2)" {
		t.Errorf("the chat's second message %q: the title request entered its session", got)
	}
	if keys := r.sessions(t); !slices.Equal(keys, []string{"agent:main:openai:direct:owui-chat-1"}) {
		t.Errorf("sessions stored %v, want only the chat's", keys)
	}
}

// A stateless request's session is deleted when its run ends, so the run is offered no tool
// whose work reports back to the session later (a sub-agent, a cron job, a background
// process); a durable session keeps them.
func TestOpenAIAPIStatelessOffersNoToolThatOutlivesTheRun(t *testing.T) {
	noop := func(context.Context, tools.Call) (tools.Result, error) { return tools.Result{}, nil }
	r := newAPIRig(t, func(d *actors.Deps) {
		var extra []tools.Tool
		for _, name := range []string{"cron", "sessions_spawn", "process", "read"} {
			extra = append(extra, &testTool{name: name, run: noop})
		}
		reg, err := tools.NewRegistry(extra...)
		if err != nil {
			t.Fatal(err)
		}
		policy, err := reg.Policy(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		d.Agents[0].Tools, d.Agents[0].Policy = reg, policy
	})
	if status, _, body := r.post(t, `{"model":"reef/main","messages":[{"role":"user","content":"hi"}]}`); status != 200 {
		t.Fatalf("stateless: %d %s", status, body)
	}
	if status, _, body := r.post(t, `{"model":"reef/main","user":"ann","messages":[{"role":"user","content":"hi"}]}`); status != 200 {
		t.Fatalf("durable: %d %s", status, body)
	}
	reqs := r.script.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if got := reqs[0].Tools; !slices.Equal(got, []string{"read"}) {
		t.Errorf("a stateless run was offered %v, want only [read]", got)
	}
	if got := reqs[1].Tools; len(got) != 4 {
		t.Errorf("a durable run was offered %v, want all four", got)
	}
}
