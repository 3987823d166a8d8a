package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// relayEnd is one node's relay in a test, and what it heard.
type relayEnd struct {
	relay *cluster.Relay
	mu    sync.Mutex
	got   []heard
}

type heard struct {
	from string
	m    cluster.Message
}

func (e *relayEnd) heard() []heard {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]heard(nil), e.got...)
}

// mergeDeltas folds a "delta" into the previous one of the same session.
func mergeDeltas(prev *cluster.Message, next cluster.Message) bool {
	if prev.Kind != "delta" || next.Kind != "delta" || prev.Session != next.Session {
		return false
	}
	var a, b string
	if json.Unmarshal(prev.Data, &a) != nil || json.Unmarshal(next.Data, &b) != nil {
		return false
	}
	prev.Data, _ = json.Marshal(a + b)
	return true
}

func startRelay(t *testing.T, url, node string) *relayEnd {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r, err := cluster.NewRelay(context.Background(), s.Pool(), node, cluster.RelayOptions{Merge: mergeDeltas}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	e := &relayEnd{relay: r}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, func(from string, m cluster.Message) {
			e.mu.Lock()
			e.got = append(e.got, heard{from, m})
			e.mu.Unlock()
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-r.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("the relay does not listen")
	}
	return e
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// TestRelayDeliversInOrderOnce: node b relays numbered messages, some far over a
// notification's 8000 bytes (multi-byte text, cut into frames), and runs of text deltas;
// node a hears every one of b's messages once and in order, the deltas merged into fewer
// messages with the same text; b does not hear itself; a node of another schema (another
// cluster on the same database) hears nothing.
func TestRelayDeliversInOrderOnce(t *testing.T) {
	url := pgtest.URL(t)
	a, b := startRelay(t, url, "node-a"), startRelay(t, url, "node-b")
	other := startRelay(t, pgtest.URL(t), "node-a")

	const n = 300
	var deltas strings.Builder
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("m%d", i)
		if i%50 == 7 { // ~36 KB of two- and three-byte runes
			text += strings.Repeat("é漢", 7000)
		}
		if !b.relay.Send(cluster.Message{Kind: "msg", Session: "s1", Data: jsonOf(text)}) {
			t.Fatalf("message %d dropped", i)
		}
		for j := 0; j < 5; j++ {
			d := fmt.Sprintf("<%d.%d>", i, j)
			deltas.WriteString(d)
			b.relay.Send(cluster.Message{Kind: "delta", Session: "s1", Data: jsonOf(d)})
		}
	}
	b.relay.Send(cluster.Message{Kind: "end"})

	deadline := time.Now().Add(30 * time.Second)
	for {
		got := a.heard()
		if len(got) > 0 && got[len(got)-1].m.Kind == "end" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a heard %d messages, not the end; stats a %+v, b %+v", len(got), a.relay.Stats(), b.relay.Stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var msgs int
	var streamed strings.Builder
	for _, h := range a.heard() {
		if h.from != "node-b" {
			t.Fatalf("a heard %q from %q", h.m.Kind, h.from)
		}
		var text string
		json.Unmarshal(h.m.Data, &text)
		switch h.m.Kind {
		case "msg":
			want := fmt.Sprintf("m%d", msgs)
			if !strings.HasPrefix(text, want) || (msgs%50 == 7) != (len(text) > 1000) {
				t.Fatalf("message %d is %.20q (%d bytes); want %s", msgs, text, len(text), want)
			}
			if !strings.HasSuffix(streamed.String(), fmt.Sprintf("<%d.4>", msgs-1)) && msgs > 0 {
				t.Fatalf("message %d came before the deltas sent before it; deltas so far end %q", msgs, streamed.String()[max(0, streamed.Len()-20):])
			}
			msgs++
		case "delta":
			streamed.WriteString(text)
		}
	}
	if msgs != n || streamed.String() != deltas.String() {
		t.Fatalf("a heard %d messages and %d bytes of deltas; want %d and %d", msgs, streamed.Len(), n, deltas.Len())
	}
	st := b.relay.Stats()
	if st.Sent >= 6*n || st.Dropped != 0 {
		t.Errorf("b's stats %+v: want the deltas merged (fewer than %d messages sent), none dropped", st, 6*n)
	}
	if got := b.heard(); len(got) != 0 {
		t.Errorf("b heard itself: %d messages", len(got))
	}
	if got := other.heard(); len(got) != 0 {
		t.Errorf("a relay of another schema heard %d messages", len(got))
	}
	if st := a.relay.Stats(); st.Gaps != 0 || st.Dropped != 0 {
		t.Errorf("a's stats %+v: want no gaps, nothing dropped", st)
	}
}

// TestRelayBothWays: each node hears the other's messages, not its own.
func TestRelayBothWays(t *testing.T) {
	url := pgtest.URL(t)
	a, b := startRelay(t, url, "a"), startRelay(t, url, "b")
	a.relay.Send(cluster.Message{Kind: "cancel", Session: "k1"})
	b.relay.Send(cluster.Message{Kind: "cancel", Session: "k2"})
	deadline := time.Now().Add(10 * time.Second)
	for len(a.heard()) < 1 || len(b.heard()) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("a heard %v, b heard %v", a.heard(), b.heard())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // nothing more comes
	if ha, hb := a.heard(), b.heard(); len(ha) != 1 || ha[0].m.Session != "k2" || ha[0].from != "b" ||
		len(hb) != 1 || hb[0].m.Session != "k1" || hb[0].from != "a" {
		t.Fatalf("a heard %+v, b heard %+v", ha, hb)
	}
}

// TestRelayFlushesWhenStopping: what a node queued before its relay stops (the last replies
// of a node shutting down) is still sent.
func TestRelayFlushesWhenStopping(t *testing.T) {
	url := pgtest.URL(t)
	a := startRelay(t, url, "a")
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := cluster.NewRelay(context.Background(), s.Pool(), "b", cluster.RelayOptions{}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	b.Send(cluster.Message{Kind: "send", Session: "k", Data: jsonOf("the last reply")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before it ran: only the flush sends
	b.Run(ctx, func(string, cluster.Message) {})
	deadline := time.Now().Add(10 * time.Second)
	for len(a.heard()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a heard nothing; b's stats %+v", b.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h := a.heard(); len(h) != 1 || string(h[0].m.Data) != `"the last reply"` {
		t.Fatalf("a heard %+v", h)
	}
}
