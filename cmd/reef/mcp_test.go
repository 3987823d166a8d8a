package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools/mcp/mcptest"
)

// mcpCanary is a credential given to an MCP server in its env block: the server gets it, the
// model, the transcript and the log never see it.
const mcpCanary = "mcp-canary-5b8e1d7c"

// A chat whose model calls an MCP server's tools: the tools are offered with their schemas,
// called, and their results wrapped as untrusted data; the server gets its env block but
// none of reef's secrets.
func TestChatCallsAnMCPTool(t *testing.T) {
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "test__echo", Arguments: `{"text":"hello mcp"}`}}},
		fake.Reply{ToolCalls: []messages.ToolCall{
			{ID: "call_2", Name: "test__env", Arguments: `{"name":"OPENAI_API_KEY"}`},
			{ID: "call_3", Name: "test__env", Arguments: `{"name":"SERVICE_TOKEN"}`},
			{ID: "call_4", Name: "test__fail", Arguments: `{}`},
		}},
		fake.Reply{Text: "All done."})
	home, e := writeConfig(t, srv, fmt.Sprintf(`
mcp:
  servers:
    test:
      command: %q
      env:
        %s: "1"
        SERVICE_TOKEN: ${SERVICE_TOKEN}
`, os.Args[0], mcptest.EnvServe))
	e["SERVICE_TOKEN"] = mcpCanary
	res := reef(t, e, "use the echo tool\n", "chat")
	if res.code != 0 || res.stdout != "All done.\n" {
		t.Fatalf("exit code %d, stdout %q; stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := srv.Script().Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3", len(reqs))
	}
	for _, n := range []string{"test__echo", "test__env", "test__crash"} {
		if !slices.Contains(reqs[0].Tools, n) {
			t.Errorf("tools offered %v, want %s among them", reqs[0].Tools, n)
		}
	}
	if got := echoTextSchema(t, reqs[0].Body); got.Type != "string" || got.Description != "the text to send back" {
		t.Errorf("echo's schema in the request: text is %+v", got)
	}
	results := map[string]messages.ChatMessage{}
	for _, m := range reqs[2].Messages {
		if m.Role == messages.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	checks := []struct{ id, want string }{
		{"call_1", "echo: hello mcp"},
		{"call_2", "OPENAI_API_KEY=\n"}, // reef's own secrets stay with reef
		{"call_3", "SERVICE_TOKEN=[redacted]"},
		{"call_4", "the disk is on fire"}, // an isError result (the wire does not carry the flag)
	}
	for _, c := range checks {
		r, ok := results[c.id]
		if !ok || !strings.Contains(r.Content, c.want) || !strings.Contains(r.Content, "<<<UNTRUSTED") {
			t.Errorf("%s: got %+v, want %q inside untrusted markers", c.id, r, c.want)
		}
	}
	noCanary(t, home, srv, res.stdout, res.stderr)
	for _, f := range []string{filepath.Join(home, "logs", "reef.log"), filepath.Join(home, "data", "reef.db")} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), mcpCanary) {
			t.Errorf("%s holds the MCP server's credential", f)
		}
	}
	for i, r := range reqs {
		if strings.Contains(string(r.Body), mcpCanary) {
			t.Errorf("request %d holds the MCP server's credential", i)
		}
	}
}

// echoTextSchema finds test__echo's "text" parameter in a chat completions request body.
func echoTextSchema(t *testing.T, body []byte) (p struct{ Type, Description string }) {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name       string
				Parameters struct {
					Properties map[string]json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("the request: %v", err)
	}
	for _, tl := range req.Tools {
		if tl.Function.Name == "test__echo" {
			_ = json.Unmarshal(tl.Function.Parameters.Properties["text"], &p)
		}
	}
	return p
}
