package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
	"github.com/reefgw/reef/tools/mcp/mcptest"
)

// TestChatOffersToolsAnMCPServerAdds: through the real binary, an MCP server adds tools while
// reef runs (notifications/tools/list_changed). The next model request offers the one the
// agent's policy allows and not the one a deny pattern covers; a call of the denied one,
// made anyway, is refused with an error that says so and never reaches the server.
func TestChatOffersToolsAnMCPServerAdds(t *testing.T) {
	server := mcptest.NewServer()
	var mu sync.Mutex
	var ran []string // the added tools the server ran
	addTool := func(name string) {
		sdk.AddTool(server, &sdk.Tool{Name: name, Description: "Added while reef runs."},
			func(_ context.Context, _ *sdk.CallToolRequest, in mcptest.EchoArgs) (*sdk.CallToolResult, any, error) {
				mu.Lock()
				ran = append(ran, name)
				mu.Unlock()
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " ran: " + in.Text}}}, nil, nil
			})
	}
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)

	const maxWaits = 30 // model turns spent waiting for the new tool to be offered
	script := fake.NewScript()
	script.Models = []string{"test-model"}
	var once sync.Once
	script.Respond = func(req fake.Request) fake.Reply {
		once.Do(func() { addTool("added"); addTool("secret_keys") })
		tools := req.Tools
		var results int
		for _, m := range req.Messages {
			if m.Role == messages.RoleTool {
				results++
			}
		}
		switch {
		case slices.Contains(tools, "live__added") && !strings.Contains(lastToolResults(req), "forced"):
			return fake.Reply{ToolCalls: []messages.ToolCall{
				{ID: "call_added", Name: "live__added", Arguments: `{"text":"forced ok"}`},
				{ID: "call_secret", Name: "live__secret_keys", Arguments: `{"text":"forced"}`},
			}}
		case slices.Contains(tools, "live__added"):
			return fake.Reply{Text: "All done."}
		case results < maxWaits: // reef has not listed the server's tools again yet: wait a turn
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: fmt.Sprintf("call_wait%d", results),
				Name: "live__echo", Arguments: fmt.Sprintf(`{"text":"wait %d"}`, results)}}}
		}
		return fake.Reply{Text: "gave up"}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	home, e := writeConfig(t, srv, fmt.Sprintf(`
agents:
  - id: main
    tools: {deny: ["mcp:live:secret*"]}
    limits: {maxToolCalls: 100, loopWarnAt: 90, loopStopAt: 100}
mcp:
  servers:
    live:
      url: %s
`, mcpSrv.URL))
	res := reef(t, e, "use the new tool\n", "chat")
	if res.code != 0 || res.stdout != "All done.\n" {
		t.Fatalf("exit code %d, stdout %q; stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := script.Requests()
	if slices.Contains(reqs[0].Tools, "live__added") {
		t.Errorf("the first request already offered live__added: the test did not test adding")
	}
	for i, r := range reqs {
		if slices.Contains(r.Tools, "live__secret_keys") {
			t.Errorf("request %d offers live__secret_keys, which mcp:live:secret* denies: %v", i, r.Tools)
		}
	}
	last := reqs[len(reqs)-1]
	if !slices.Contains(last.Tools, "live__added") || !slices.Contains(last.Tools, "live__echo") {
		t.Errorf("the last request offers %v, want live__added and live__echo among them", last.Tools)
	}
	results := map[string]string{}
	for _, m := range last.Messages {
		if m.Role == messages.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	if got := results["call_added"]; !strings.Contains(got, "added ran: forced ok") {
		t.Errorf("the allowed added tool: got %q", got)
	}
	if got := results["call_secret"]; !strings.Contains(got, `"live__secret_keys" is not allowed for this agent`) {
		t.Errorf("the denied added tool: got %q, want a refusal naming it", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(ran, "secret_keys") {
		t.Errorf("the server ran the denied tool: %v", ran)
	}
	noCanary(t, home, srv, res.stdout, res.stderr)
}

// lastToolResults joins the tool results at the end of a request's messages.
func lastToolResults(req fake.Request) string {
	var out []string
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == messages.RoleTool; i-- {
		out = append(out, req.Messages[i].Content)
	}
	return strings.Join(out, "\n")
}
