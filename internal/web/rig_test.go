package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/subagent"
)

const (
	testToken = "test-gateway-token-0123456789"
	canary    = "sk-canary-5f1d2e3c4b5a69788796a5b4"
)

// fakeBackend serves fixed data, some of it holding the canary secret, and records changes.
type fakeBackend struct {
	mu      sync.Mutex
	actions []string
	chats   map[string]Chat // chat_test.go: the ChatBackend side
}

func (b *fakeBackend) Overview(context.Context) (Overview, error) {
	return Overview{Version: "test", Started: time.Now(), Sessions: 2, TokensToday: map[string]int{"main": 42},
		Channels: []ChannelRow{{Name: "telegram", Connected: false, State: "failed", Reason: "401 for token " + canary}}}, nil
}

func (b *fakeBackend) Sessions(_ context.Context, q string) ([]SessionRow, error) {
	rows := []SessionRow{
		{SessionInfo: persistence.SessionInfo{Key: "agent:main:webchat:direct:owner", AgentID: "main", Channel: "webchat", ChatID: "owner"}},
		{SessionInfo: persistence.SessionInfo{Key: "agent:main:subagent:1", AgentID: "main"}, Parent: "agent:main:webchat:direct:owner"},
	}
	var out []SessionRow
	for _, r := range rows {
		if strings.Contains(r.Key, q) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (b *fakeBackend) Conversation(_ context.Context, key string) (Conversation, error) {
	if key != "agent:main:webchat:direct:owner" {
		return Conversation{}, fmt.Errorf("%w: no session %q", ErrNotFound, key)
	}
	return Conversation{
		Info: persistence.SessionInfo{Key: key, AgentID: "main", Channel: "webchat"},
		Entries: []persistence.Entry{
			{Seq: 1, ChatMessage: messages.ChatMessage{Role: messages.RoleUser, Content: "list files, key " + canary}},
			{Seq: 2, ChatMessage: messages.ChatMessage{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "c1", Name: "ls", Arguments: `{"path":"."}`}}}},
			{Seq: 3, ChatMessage: messages.ChatMessage{Role: messages.RoleTool, ToolCallID: "c1", ToolName: "ls", Content: "notes.txt"}},
			{Seq: 4, ChatMessage: messages.ChatMessage{Role: messages.RoleAssistant, Content: "<b>There is</b> notes.txt"}},
		},
		Snapshots: []persistence.Snapshot{{Seq: 4, Kind: persistence.SnapshotReset}},
		Children:  []subagent.Link{{Child: "agent:main:subagent:1", Parent: key, Label: "helper", Task: "count"}},
	}, nil
}

func (b *fakeBackend) Export(_ context.Context, key, format string, w io.Writer) error {
	if _, err := b.Conversation(context.Background(), key); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s export of %s holding %s\n", format, key, canary)
	return nil
}

func (b *fakeBackend) CronJobs(context.Context) ([]schedule.Job, error) {
	return []schedule.Job{{ID: "job1", AgentID: "main", Name: "daily", Enabled: true, Schedule: schedule.Spec{Kind: "cron", Expr: "0 9 * * *"}}}, nil
}

func (b *fakeBackend) Cron(_ context.Context, action, id string) error {
	if id != "job1" {
		return fmt.Errorf("%w: no job %q", ErrNotFound, id)
	}
	b.record("cron " + action + " " + id)
	return nil
}

func (b *fakeBackend) Pairings(context.Context) ([]access.Pairing, error) {
	return []access.Pairing{{Channel: "telegram", Code: "ABCD2345", SenderID: "42", SenderName: "Ann", Created: time.Now()}}, nil
}

func (b *fakeBackend) Pairing(_ context.Context, action, channel, code string) error {
	if code != "ABCD2345" {
		return fmt.Errorf("%w: no pending pairing request with that code", ErrNotFound)
	}
	b.record("pairing " + action + " " + channel + " " + code)
	return nil
}

func (b *fakeBackend) Config(context.Context) (ConfigView, error) {
	return ConfigView{YAML: "providers:\n  openai:\n    apiKey: " + canary + "\n", Checks: []Check{{OK: true, What: "data directory", Detail: "ok"}}}, nil
}

// ProbeProviders answers one provider of each kind; the refused one's reason echoes the key,
// as OpenAI's 401 does, so the page must redact it.
func (b *fakeBackend) ProbeProviders(context.Context) ([]ProviderProbe, error) {
	b.record("probe providers")
	return []ProviderProbe{
		{Name: "local", Type: "openai", BaseURL: "http://127.0.0.1:11434/v1", State: "reachable", OK: true, Latency: 3 * time.Millisecond},
		{Name: "openai", Type: "openai", State: "auth refused", Reason: "Incorrect API key provided: " + canary, Latency: 120 * time.Millisecond},
		{Name: "spare", Type: "anthropic", BaseURL: "http://127.0.0.1:9/v1", State: "unreachable", Reason: "connection refused", Latency: time.Millisecond},
	}, nil
}

func (b *fakeBackend) record(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.actions = append(b.actions, s)
}

func (b *fakeBackend) recorded() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.actions...)
}

// rig is a Server behind httptest with a running WebChat channel whose deliveries are kept.
type rig struct {
	srv     *Server
	ts      *httptest.Server
	backend *fakeBackend
	chat    *webchat.Channel
	bus     *events.Bus
	inbound chan messages.Inbound
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{backend: &fakeBackend{}, chat: webchat.New(webchat.Config{}), bus: events.NewBus(), inbound: make(chan messages.Inbound, 10)}
	srv, err := New(Config{Listen: "127.0.0.1:0", Token: testToken, Version: "test", Backend: r.backend, Chat: r.chat,
		Events: r.bus, Secrets: []string{canary, testToken}}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	r.ts = httptest.NewServer(srv.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.chat.Run(ctx, func(_ context.Context, in messages.Inbound) error { r.inbound <- in; return nil })
	}()
	t.Cleanup(func() { r.ts.Close(); cancel(); <-done; r.bus.Close() })
	waitFor(t, "the chat to run", func() bool { return r.chat.Post(context.Background(), webchat.Message{}) != webchat.ErrNotRunning })
	return r
}

// waitFor polls cond with a generous deadline (the machine may be loaded).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// do sends a request; auth is "bearer", "cookie", or "" for none. csrf is added as a header.
func (r *rig) do(t *testing.T, method, path, auth, csrf, ctype, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, r.ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch auth {
	case "bearer":
		req.Header.Set("Authorization", "Bearer "+testToken)
	case "cookie":
		req.AddCookie(&http.Cookie{Name: cookieName, Value: r.srv.auth.session()})
	}
	if csrf != "" {
		req.Header.Set(csrfHeader, csrf)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
