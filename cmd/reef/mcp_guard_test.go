package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools/mcp/mcptest"
)

// An MCP server over HTTP passes the SSRF guard: its own configured host is the exception,
// so a server on this machine works, but a redirect to another private address is refused.
func TestMCPHTTPClientIsGuarded(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "reached") }))
	t.Cleanup(other.Close)
	_, port, _ := net.SplitHostPort(other.Listener.Addr().String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other":
			http.Redirect(w, r, "http://127.0.0.2:"+port+"/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			fmt.Fprint(w, "mcp here")
		}
	}))
	t.Cleanup(srv.Close)
	hc, err := mcpHTTPClient(nil, srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(srv.URL + "/mcp")
	if err != nil {
		t.Fatalf("the configured host was refused: %v", err)
	}
	resp.Body.Close()
	for _, path := range []string{"/to-other", "/to-metadata"} {
		resp, err := hc.Get(srv.URL + path)
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: the redirect was followed", path)
		} else if !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("%s: got %v, want the guard's refusal", path, err)
		}
	}
	// A host the owner did not name is refused, and allowPrivate opens it.
	if resp, err := hc.Get("http://127.0.0.2:" + port + "/"); err == nil {
		resp.Body.Close()
		t.Errorf("another loopback address was reached")
	}
	if _, err := mcpHTTPClient(nil, "file:///etc/passwd"); err == nil {
		t.Errorf("a file URL was accepted")
	}
}

// reef chat calls the tool of an MCP server over streamable HTTP on 127.0.0.1, through the guard.
func TestChatCallsAnHTTPMCPServer(t *testing.T) {
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.NewServer() }, nil)
	mcpSrv := httptest.NewServer(handler)
	t.Cleanup(mcpSrv.Close)
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "web__echo", Arguments: `{"text":"over http"}`}}},
		fake.Reply{Text: "All done."})
	_, e := writeConfig(t, srv, fmt.Sprintf("mcp:\n  servers:\n    web:\n      url: %q\n", mcpSrv.URL))
	res := reef(t, e, "use the echo tool\n", "chat")
	if res.code != 0 || res.stdout != "All done.\n" {
		t.Fatalf("exit code %d, stdout %q; stderr:\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := srv.Script().Requests()
	var got string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == messages.RoleTool {
			got = m.Content
		}
	}
	if !strings.Contains(got, "echo: over http") {
		t.Errorf("tool result %q", got)
	}
}
