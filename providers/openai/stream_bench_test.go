package openai_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/openai"
)

// BenchmarkStreamFirstTurn: one streamed request of a first turn's size (a 10 KB system
// prompt, most of it the stable prefix, and a short message, ~17 KB on the wire with the tools) over HTTP/1.1 on loopback,
// answered by a minimal stream, with the client's default transport (its connections kept
// alive, as between the turns of a busy gateway).
func BenchmarkStreamFirstTurn(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	const events = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, events)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	c := openai.New(openai.Config{BaseURL: "http://" + ln.Addr().String() + "/v1", APIKey: "sk-bench"})
	tools := make([]messages.ToolSpec, 8)
	for i := range tools {
		tools[i] = messages.ToolSpec{Name: "tool" + string(rune('a'+i)), Description: strings.Repeat("does things. ", 50),
			Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	}
	stable := strings.Repeat("You are a helpful assistant. ", 360) // as reef's: a stable prefix, then the run's lines
	req := providers.Request{Model: "m", System: stable + "Time: 22:00. Session: agent:main:telegram:direct:1.\n",
		SystemStable: len(stable), Tools: tools,
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "please answer bm-1-0"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := c.Stream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := s.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
}
