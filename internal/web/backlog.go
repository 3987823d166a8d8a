package web

import (
	"context"
	"sync"

	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
)

// The Live page's backlog: the last backlogSize run events, kept from the server's Start, so
// that opening (or reloading) the page shows what just happened. A run's text deltas are
// folded into one event holding the text written so far (its last foldedText bytes), so a
// long answer is one line, not hundreds.
const (
	backlogSize = 300
	foldedText  = 2000
	// followBuffer is the backlog's subscription buffer: small, for it only appends (the
	// default, 256 events, would cost ~70 KB at idle).
	followBuffer = 32
)

type backlog struct {
	mu  sync.Mutex
	evs []messages.RunEvent // oldest first, at most backlogSize
}

// add keeps ev, folding a text delta into the run's text event (one per run, where its
// text began; among the last 50 events).
func (b *backlog) add(ev messages.RunEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.Kind == messages.RunTextDelta {
		for i := len(b.evs) - 1; i >= 0 && i >= len(b.evs)-50; i-- {
			prev := &b.evs[i]
			if prev.Run != ev.Run || prev.Session != ev.Session {
				continue
			}
			if prev.Kind == messages.RunTextDelta { // the run's text so far: it grows
				text := prev.Text + ev.Text
				if len(text) > foldedText {
					text = "…" + text[len(text)-foldedText:]
				}
				prev.Text, prev.Seq, prev.Time = text, ev.Seq, ev.Time
				return
			}
			if prev.Kind == messages.RunStart {
				break // the run's first text
			}
		}
	}
	if len(b.evs) == backlogSize {
		copy(b.evs, b.evs[1:])
		b.evs = b.evs[:backlogSize-1]
	}
	b.evs = append(b.evs, ev)
}

// events are the kept events of session ("" = all) of kind ("" = all), oldest first.
func (b *backlog) events(session, kind string) []messages.RunEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []messages.RunEvent
	for _, ev := range b.evs {
		if (session == "" || ev.Session == session) && (kind == "" || string(ev.Kind) == kind) {
			out = append(out, ev)
		}
	}
	return out
}

// follow keeps the bus's events in b until ctx ends or the bus closes.
func (b *backlog) follow(ctx context.Context, bus *events.Bus) {
	sub := bus.Subscribe("", followBuffer)
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sub.Events():
			if !ok {
				return
			}
			if ev.Kind != messages.EventsLost {
				b.add(ev)
			}
		}
	}
}

// liveKinds are the event kinds the Live page filters by.
var liveKinds = []messages.RunEventKind{messages.RunStart, messages.RunTextDelta, messages.RunToolStart, messages.RunToolEnd,
	messages.RunPlanUpdate, messages.SubagentStart, messages.SubagentEnd, messages.ApprovalWait, messages.RunEnd}
