package sse

import (
	"errors"
	"io"
	"testing"
	"time"
)

// slowBody yields its parts one by one, each after a pause, then EOF.
type slowBody struct {
	parts  []string
	pause  time.Duration
	closed chan struct{}
}

func (b *slowBody) Read(p []byte) (int, error) {
	if len(b.parts) == 0 {
		return 0, io.EOF
	}
	select {
	case <-time.After(b.pause):
	case <-b.closed:
		return 0, errors.New("closed")
	}
	n := copy(p, b.parts[0])
	b.parts = b.parts[1:]
	return n, nil
}

func (b *slowBody) Close() error {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

func TestIdleWatchdog(t *testing.T) {
	ping := func(ev Event) bool { return ev.Name == "ping" }
	// Keep-alives: 40 parts 50 ms apart (2 s in all) against an idle timeout of 500 ms, which
	// must fire. Data: 12 parts 5 ms apart against 2 s, which no slow machine reaches.
	tests := []struct {
		name        string
		part        string
		keepalive   func(Event) bool
		n           int
		pause, idle time.Duration
		want        error
	}{
		{"comments are not progress", ": keepalive\n\n", nil, 40, 50 * time.Millisecond, 500 * time.Millisecond, ErrIdle},
		{"marked keep-alive events are not progress", "event: ping\ndata: {}\n\n", ping, 40, 50 * time.Millisecond, 500 * time.Millisecond, ErrIdle},
		{"data events are progress", "data: x\n\n", nil, 12, 5 * time.Millisecond, 2 * time.Second, io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := make([]string, tt.n)
			for i := range parts {
				parts[i] = tt.part
			}
			r := NewReader(&slowBody{parts: parts, pause: tt.pause, closed: make(chan struct{})}, tt.idle)
			r.Keepalive = tt.keepalive
			defer r.Close()
			var err error
			n := 0
			for err == nil {
				var ev Event
				if ev, err = r.Next(); err == nil && ev.Name == "ping" {
					t.Errorf("Next returned a keep-alive event %+v", ev)
				}
				n++
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("after %d events: err = %v, want %v", n-1, err, tt.want)
			}
		})
	}
}
