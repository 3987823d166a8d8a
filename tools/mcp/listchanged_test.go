package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/mcp/mcptest"
)

// TestToolListChanged: when the server sends notifications/tools/list_changed, reef lists its
// tools again: a changed description reaches the model, a removed tool is no longer offered
// and its calls are refused, and the registry's generation moves so cached lists are rebuilt.
func TestToolListChanged(t *testing.T) {
	server := mcptest.NewServer()
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	_, ts := start(t, Config{Name: "live", URL: srv.URL, Timeout: 10 * time.Second})
	var all []tools.Tool
	for _, tl := range ts {
		all = append(all, tl)
	}
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := tools.NewPolicy(nil, nil, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	gen := reg.Generation()
	offered := func(name string) bool {
		for _, s := range reg.Specs(policy) {
			if s.Name == name {
				return true
			}
		}
		return false
	}
	if !offered("live__fail") || !strings.Contains(ts["live__echo"].Spec().Description, "Sends the text back") {
		t.Fatalf("before the change: fail offered %v, echo %q", offered("live__fail"), ts["live__echo"].Spec().Description)
	}

	sdk.AddTool(server, &sdk.Tool{Name: "echo", Description: "Sends the text back, louder."},
		func(_ context.Context, _ *sdk.CallToolRequest, in mcptest.EchoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	server.RemoveTools("fail")

	deadline := time.Now().Add(30 * time.Second)
	for offered("live__fail") || !strings.Contains(ts["live__echo"].Spec().Description, "louder") {
		if time.Now().After(deadline) {
			t.Fatalf("after the change: fail offered %v, echo %q", offered("live__fail"), ts["live__echo"].Spec().Description)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if reg.Generation() == gen {
		t.Errorf("the registry's generation did not move")
	}
	if res := call(t, ts["live__fail"], `{}`); !res.IsError || !strings.Contains(res.Content, "no longer offers fail") {
		t.Errorf("a withdrawn tool: got %+v", res)
	}
	if res := call(t, ts["live__echo"], `{"text":"hi"}`); res.IsError || res.Content != "HI" {
		t.Errorf("the changed tool: got %+v", res)
	}
}

// TestToolAddedIsOffered: a tool the server adds while reef runs joins the registry; a policy
// offers it when its entries allow it (mcp:<server>) and never when a deny pattern covers it,
// and a call of the allowed one reaches the server.
func TestToolAddedIsOffered(t *testing.T) {
	server := mcptest.NewServer()
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(srv.Close)
	s, _ := start(t, Config{Name: "live", URL: srv.URL, Timeout: 10 * time.Second})
	reg, err := tools.NewRegistryWith([]tools.Source{s})
	if err != nil {
		t.Fatal(err)
	}
	open, err := reg.Policy([]string{"mcp:live"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed, err := reg.Policy([]string{"mcp:live"}, []string{"mcp:live:sh*"})
	if err != nil {
		t.Fatal(err)
	}
	offered := func(p tools.Policy, name string) bool {
		for _, spec := range reg.Specs(p) {
			if spec.Name == name {
				return true
			}
		}
		return false
	}
	if offered(open, "live__shout") {
		t.Fatal("live__shout offered before the server added it")
	}
	sdk.AddTool(server, &sdk.Tool{Name: "shout", Description: "Sends the text back, louder."},
		func(_ context.Context, _ *sdk.CallToolRequest, in mcptest.EchoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	deadline := time.Now().Add(30 * time.Second)
	for !offered(open, "live__shout") {
		if time.Now().After(deadline) {
			t.Fatalf("the added tool is not offered: %v", reg.Names())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if offered(closed, "live__shout") || closed.Allows("live__shout") || !offered(closed, "live__echo") {
		t.Errorf("deny mcp:live:sh*: shout offered %v, allowed %v; echo offered %v",
			offered(closed, "live__shout"), closed.Allows("live__shout"), offered(closed, "live__echo"))
	}
	tl, ok := reg.Get("live__shout")
	if !ok {
		t.Fatal("live__shout is not in the registry")
	}
	if res := call(t, tl, `{"text":"hi"}`); res.IsError || res.Content != "HI" {
		t.Errorf("the added tool: got %+v", res)
	}
}

// TestServerUpAfterStart: a server that was down when reef started offers its tools once it
// comes up, without a restart.
func TestServerUpAfterStart(t *testing.T) {
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.NewServer() }, nil)
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s, err := NewServer(Config{Name: "late", URL: srv.URL, Timeout: 10 * time.Second, MinBackoff: 10 * time.Millisecond}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	m := &Manager{servers: []*Server{s}, log: zerolog.Nop()}
	srcs := m.Start(context.Background(), 200*time.Millisecond)
	t.Cleanup(m.Stop)
	reg, err := tools.NewRegistryWith(srcs)
	if err != nil {
		t.Fatal(err)
	}
	if names := reg.Names(); len(names) != 0 {
		t.Fatalf("a server that is down offers %v", names)
	}
	up.Store(true)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, ok := reg.Get("late__echo"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's tools did not join the registry after it came up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
