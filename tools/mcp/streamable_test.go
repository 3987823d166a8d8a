package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reefgw/reef/tools/mcp/mcptest"
)

// A server restarted behind the same URL answers 404 to the old session: the call says it
// was not run, and reef connects again on its own, so the next call works.
func TestStreamableSessionGoneReconnects(t *testing.T) {
	newHandler := func() http.Handler {
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcptest.NewServer() }, nil)
	}
	var current atomic.Value
	current.Store(newHandler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		current.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	_, ts := start(t, Config{Name: "web", URL: srv.URL, Timeout: 10 * time.Second, MinBackoff: 10 * time.Millisecond})
	if res := call(t, ts["web__echo"], `{"text":"one"}`); res.IsError || res.Content != "echo: one" {
		t.Fatalf("got %+v", res)
	}
	current.Store(newHandler()) // the "restart": it knows no session
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := call(t, ts["web__echo"], `{"text":"two"}`)
		if !res.IsError && res.Content == "echo: two" {
			return
		}
		if res.IsError && !strings.Contains(res.Content, "was not run") && !strings.Contains(res.Content, "not available") {
			t.Fatalf("a call to a server that lost the session: %q", res.Content)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect: last %q", res.Content)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
