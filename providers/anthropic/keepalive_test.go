package anthropic_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

// TestKeepaliveIsNotProgress: a server that sends only keep-alives (Anthropic ping events) after the
// headers is cut by the idle timeout, not held until the turn's timeout (#20 finding 10).
func TestKeepaliveIsNotProgress(t *testing.T) {
	c, _ := setupIdle(t, 300*time.Millisecond, fake.Reply{Hang: true, Keepalive: 40 * time.Millisecond})
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
