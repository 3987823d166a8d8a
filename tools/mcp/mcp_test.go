package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/mcp/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.ServeStdio() // this test binary is also the stdio test server
	os.Exit(m.Run())
}

// stdioConfig runs this test binary as the mcptest server.
func stdioConfig(t *testing.T, name string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{Name: name, Command: exe, Env: []string{mcptest.EnvServe + "=1",
		mcptest.EnvCrashMarker + "=" + filepath.Join(t.TempDir(), "crashed"), "CANARY=visible"},
		Timeout: 10 * time.Second, MinBackoff: 50 * time.Millisecond}
}

// start starts a server and waits for its tools, by name.
func start(t *testing.T, cfg Config) (*Server, map[string]tools.Tool) {
	t.Helper()
	s, err := NewServer(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	t.Cleanup(s.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !s.WaitListed(ctx) {
		t.Fatalf("server %s did not list its tools", cfg.Name)
	}
	byName := map[string]tools.Tool{}
	for _, tl := range s.Tools() {
		byName[tl.Spec().Name] = tl
	}
	return s, byName
}

func call(t *testing.T, tl tools.Tool, args string) tools.Result {
	t.Helper()
	if tl == nil {
		t.Fatal("no such tool")
	}
	return tools.Run(context.Background(), tl, tools.Call{ID: "c1", Args: []byte(args)})
}

func TestStdioToolsAndResults(t *testing.T) {
	_, ts := start(t, stdioConfig(t, "test"))
	for _, n := range []string{"test__echo", "test__fail", "test__crash", "test__hang", "test__image", "test__big"} {
		if ts[n] == nil {
			t.Errorf("tool %s not offered", n)
		}
	}
	if p := string(ts["test__echo"].Spec().Parameters); !strings.Contains(p, `"text"`) {
		t.Errorf("echo's schema lacks its text parameter: %s", p)
	}
	tests := []struct {
		tool, args string
		want       string
		isErr      bool
	}{
		{"test__echo", `{"text":"hi"}`, "echo: hi", false},
		{"test__fail", `{}`, "the disk is on fire", true},
		{"test__image", ``, "a red dot\n[image image/png, 8 bytes: not shown]", false},
		{"test__echo", `[1,2]`, "arguments must be a JSON object", true},
		{"test__echo", `{"text":5}`, "", true}, // the server validates its schema
		{"test__env", `{"name":"CANARY"}`, "CANARY=visible", false},
	}
	for _, tt := range tests {
		res := call(t, ts[tt.tool], tt.args)
		if res.IsError != tt.isErr || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s %s: got %+v, want error=%v and %q", tt.tool, tt.args, res, tt.isErr, tt.want)
		}
	}
}

func TestOutputIsCapped(t *testing.T) {
	cfg := stdioConfig(t, "test")
	cfg.MaxOutput = 1000
	_, ts := start(t, cfg)
	res := call(t, ts["test__big"], `{"n":5000}`)
	if res.IsError || !strings.HasPrefix(res.Content, strings.Repeat("x", 1000)+"\n[output truncated: 1000 of 5000 bytes shown]") {
		t.Errorf("got %d bytes: %.80q...", len(res.Content), res.Content)
	}
}

// A server that dies during a call: the call is an error, the server is restarted, and the
// next call works.
func TestCrashMidCallRestarts(t *testing.T) {
	_, ts := start(t, stdioConfig(t, "test"))
	res := call(t, ts["test__crash"], `{}`)
	if !res.IsError || !strings.Contains(res.Content, "stopped during the call") {
		t.Fatalf("crash: got %+v, want an error saying the server stopped", res)
	}
	if res = call(t, ts["test__crash"], `{}`); res.IsError || res.Content != "survived" {
		t.Fatalf("after the restart: got %+v, want survived", res)
	}
	if res = call(t, ts["test__echo"], `{"text":"again"}`); res.Content != "echo: again" {
		t.Fatalf("echo after the restart: got %+v", res)
	}
}

// A server that never answers: the call ends at the server's timeout with an error, and the
// server goes on serving.
func TestHangTimesOut(t *testing.T) {
	cfg := stdioConfig(t, "slow")
	cfg.Timeout = 300 * time.Millisecond
	_, ts := start(t, cfg)
	began := time.Now()
	res := call(t, ts["slow__hang"], `{}`)
	if !res.IsError || !strings.Contains(res.Content, "did not answer within 300ms") ||
		!strings.Contains(res.Content, "mcp.servers.slow.timeoutSeconds") {
		t.Fatalf("got %+v, want a timeout error", res)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the hung call took %s", d)
	}
	if res = call(t, ts["slow__echo"], `{"text":"still here"}`); res.Content != "echo: still here" {
		t.Fatalf("echo after the hang: got %+v", res)
	}
}

// A server that cannot start offers no tools, and a call made while it is down ends at the
// timeout with the reason.
func TestServerThatCannotStart(t *testing.T) {
	s, err := NewServer(Config{Name: "gone", Command: filepath.Join(t.TempDir(), "missing"),
		Timeout: 200 * time.Millisecond, MinBackoff: 10 * time.Millisecond}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{servers: []*Server{s}, log: zerolog.Nop()}
	if got := m.Start(context.Background(), 300*time.Millisecond); len(got) != 1 || len(got[0].Tools()) != 0 {
		t.Errorf("got %d sources from a server that cannot start, want 1 without tools", len(got))
	}
	defer m.Stop()
	tl := &Tool{server: s, remote: "x"}
	res := call(t, tl, `{}`)
	if !res.IsError || !strings.Contains(res.Content, "MCP server gone is not available") {
		t.Errorf("got %+v", res)
	}
}

func TestStreamableHTTP(t *testing.T) {
	var gotAuth atomic.Value
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.NewServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization")) // every request: the POSTs and the GET stream
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the server's Stop (cleanups run last first): its SSE stream holds a connection
	_, ts := start(t, Config{Name: "web", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"},
		Timeout: 10 * time.Second})
	if res := call(t, ts["web__echo"], `{"text":"over http"}`); res.IsError || res.Content != "echo: over http" {
		t.Fatalf("got %+v", res)
	}
	if gotAuth.Load() != "Bearer s3cret" {
		t.Errorf("Authorization header: got %q", gotAuth)
	}
}

func TestConfigRefused(t *testing.T) {
	for _, c := range []Config{
		{Name: "a__b", Command: "x"},
		{Name: "Upper", Command: "x"},
		{Name: "ok"},
		{Name: "ok", Command: "x", URL: "http://127.0.0.1"},
	} {
		if _, err := NewServer(c, zerolog.Nop()); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestToolNames(t *testing.T) {
	s := &Server{cfg: Config{Name: "srv"}, log: zerolog.Nop()}
	names := s.wrapNew([]*remoteTool{{Name: "get-sum"}, {Name: "a.b c"}, {Name: "a_b_c"}, {Name: strings.Repeat("y", 70)}})
	if want := "srv__get-sum,srv__a_b_c"; strings.Join(names, ",") != want {
		t.Errorf("got %v, want %s", names, want)
	}
	got := s.Tools()
	if len(got) != 2 {
		t.Fatalf("Tools: got %d tools, want 2", len(got))
	}
	if p := string(got[0].Spec().Parameters); p != `{"type":"object","properties":{}}` {
		t.Errorf("a tool without a schema: got parameters %s", p)
	}
}
