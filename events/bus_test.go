package events

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
)

func ev(session string, seq uint64) messages.RunEvent {
	return messages.RunEvent{Session: session, Run: "r", Seq: seq, Kind: messages.RunTextDelta}
}

// drain takes what is buffered without waiting.
func drain(s *Subscription) []messages.RunEvent {
	var out []messages.RunEvent
	for {
		select {
		case e, ok := <-s.Events():
			if !ok {
				return out
			}
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestSubscriberGetsItsSessionInOrder(t *testing.T) {
	b := NewBus()
	all, one := b.Subscribe("", 10), b.Subscribe("a", 10)
	b.Publish(ev("a", 0))
	b.Publish(ev("b", 0))
	b.Publish(ev("a", 0))
	if got, want := drain(all), []messages.RunEvent{ev("a", 1), ev("b", 2), ev("a", 3)}; !cmp.Equal(got, want) {
		t.Errorf("all sessions: %s", cmp.Diff(want, got))
	}
	if got, want := drain(one), []messages.RunEvent{ev("a", 1), ev("a", 3)}; !cmp.Equal(got, want) {
		t.Errorf("session a: %s", cmp.Diff(want, got))
	}
}

// TestSlowSubscriberLosesEventsAndIsTold: Publish never waits; the slow subscriber learns how
// many it lost before the next event it gets, and a fast one loses nothing.
func TestSlowSubscriberLosesEventsAndIsTold(t *testing.T) {
	b := NewBus()
	slow, fast := b.Subscribe("", 2), b.Subscribe("", 100)
	for i := uint64(1); i <= 5; i++ {
		b.Publish(ev("a", 0)) // would deadlock here if Publish waited for the slow reader
	}
	if got, want := drain(slow), []messages.RunEvent{ev("a", 1), ev("a", 2)}; !cmp.Equal(got, want) {
		t.Errorf("slow, before catching up: %s", cmp.Diff(want, got))
	}
	b.Publish(ev("a", 6))
	got := drain(slow)
	want := []messages.RunEvent{{Kind: messages.EventsLost, Lost: 3}, ev("a", 6)}
	if !cmp.Equal(got, want) {
		t.Errorf("slow, after catching up: %s", cmp.Diff(want, got))
	}
	if got := drain(fast); len(got) != 6 {
		t.Errorf("fast subscriber got %d events, want 6", len(got))
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	b := NewBus()
	s := b.Subscribe("", 1)
	s.Close()
	s.Close() // twice is fine
	if _, ok := <-s.Events(); ok {
		t.Error("closed subscription still open")
	}
	s2 := b.Subscribe("", 1)
	b.Close()
	if _, ok := <-s2.Events(); ok {
		t.Error("bus close left a subscription open")
	}
	if _, ok := <-b.Subscribe("", 1).Events(); ok {
		t.Error("subscription on a closed bus is open")
	}
	b.Publish(ev("a", 1)) // no panic on a closed bus
	var nilBus *Bus
	nilBus.Publish(ev("a", 1))
}

// An observer sees every event in order, numbered, whatever the subscribers' buffers; the
// events a full subscriber could not take are counted as dropped.
func TestObserveSeesEverything(t *testing.T) {
	b := NewBus()
	var seen []uint64
	b.Observe(func(ev messages.RunEvent) { seen = append(seen, ev.Seq) })
	sub := b.Subscribe("", 2)
	defer sub.Close()
	for range 5 {
		b.Publish(messages.RunEvent{Session: "a"})
	}
	if want := []uint64{1, 2, 3, 4, 5}; !slices.Equal(seen, want) {
		t.Errorf("observer saw %v, want %v", seen, want)
	}
	if got := b.Dropped(); got != 3 {
		t.Errorf("Dropped = %d, want 3", got)
	}
}

// TestRelayedReachesSubscribersNotObservers: an event relayed from another node is numbered
// among this bus's events and reaches the subscribers, but not the observers (the metrics
// count it on its own node).
func TestRelayedReachesSubscribersNotObservers(t *testing.T) {
	b := NewBus()
	var observed []string
	b.Observe(func(e messages.RunEvent) { observed = append(observed, e.Session) })
	s := b.Subscribe("", 0)
	b.Publish(ev("here", 0))
	b.Relayed(ev("there", 0))
	b.Publish(ev("here", 0))
	got := drain(s)
	if len(got) != 3 || got[1].Session != "there" || got[0].Seq != 1 || got[1].Seq != 2 || got[2].Seq != 3 {
		t.Fatalf("subscriber got %+v; want here, there, here numbered 1 to 3", got)
	}
	if !slices.Equal(observed, []string{"here", "here"}) {
		t.Fatalf("observers saw %q; want only this node's events", observed)
	}
}
