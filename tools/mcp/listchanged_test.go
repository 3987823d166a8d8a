package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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
