package openai_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestKeepaliveIsNotProgress: a server that sends only keep-alives (SSE comments) after the
// headers is cut by the idle timeout, not held until the turn's timeout (#20 finding 10).
func TestKeepaliveIsNotProgress(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript(fake.Reply{Hang: true, Keepalive: 40 * time.Millisecond}))
	defer srv.Close()
	c := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: canary, IdleTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Stream(ctx, providers.Request{})
	if err == nil {
		defer s.Close()
		for err == nil {
			_, err = s.Next()
		}
	}
	if !errors.Is(err, providers.ErrIdleTimeout) {
		t.Fatalf("err = %v, want ErrIdleTimeout (keep-alives are not progress)", err)
	}
}
