// Package events is reef's run-event bus: Turns publish messages.RunEvent values, watchers
// (reef events over the control socket, progress displays) subscribe, and counters (the
// metrics) observe. It is for watching,
// not the record: Publish never blocks, each subscriber has a bounded buffer, and one that
// falls behind loses events and is told how many with an events.lost event.
//
// Concurrency: a Bus is safe for concurrent use. Publish holds the bus's lock only to copy
// the event into each subscriber's channel without waiting. A Subscription's channel is
// closed by Close or by the Bus's Close, never by anyone else.
package events

import (
	"sync"

	"github.com/reefgw/reef/messages"
)

// DefaultBuffer is a subscription's buffer when Subscribe is given none.
const DefaultBuffer = 256

// Bus fans run events out to subscribers. The zero value is not usable; use NewBus.
// A nil *Bus drops everything, so code without watchers needs no checks.
type Bus struct {
	mu        sync.Mutex
	subs      map[*Subscription]struct{}
	observers []func(messages.RunEvent)
	seq       uint64 // of the last published event
	dropped   uint64 // events a subscriber had no room for, over all subscribers
	closed    bool
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[*Subscription]struct{}{}} }

// Subscription receives the events its filter takes, in publication order.
type Subscription struct {
	bus     *Bus
	session string // "" = every session
	ch      chan messages.RunEvent
	lost    uint64 // dropped since the last delivered event; guarded by bus.mu
}

// Subscribe returns a subscription to the events of session ("" for all) with a buffer of
// buffer events (<= 0: DefaultBuffer). On a closed bus the subscription's channel is closed.
func (b *Bus) Subscribe(session string, buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	s := &Subscription{bus: b, session: session, ch: make(chan messages.RunEvent, buffer)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.ch)
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// Observe makes fn see every event as it is published, in order, on the publisher's
// goroutine and under the bus's lock: fn must be quick, must not block and must not use the
// bus. It is for counters (the metrics), which so need no buffer and lose nothing. Call it
// before publishing starts; observers stay for the bus's life.
func (b *Bus) Observe(fn func(messages.RunEvent)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.observers = append(b.observers, fn)
}

// Dropped is how many events the bus could not hand to a subscriber that was behind, over
// all subscribers since it was made.
func (b *Bus) Dropped() uint64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dropped
}

// Events is the subscription's channel; it is closed when the subscription or the bus is.
func (s *Subscription) Events() <-chan messages.RunEvent { return s.ch }

// Close ends the subscription. It may be called more than once.
func (s *Subscription) Close() {
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		close(s.ch)
	}
}

// Publish numbers ev (Seq: the bus's next number, so a run's events are numbered in the
// order they were published) and hands it to every subscriber that takes it, without
// waiting: a subscriber whose buffer is full loses it, and is sent an events.lost event with
// the count before its next delivered event.
func (b *Bus) Publish(ev messages.RunEvent) { b.publish(ev, true) }

// Relayed hands ev to the subscribers like Publish, but not to the observers: it is an event
// of a run on another node of a cluster (relayed to this node's watchers), which that node's
// observers counted.
func (b *Bus) Relayed(ev messages.RunEvent) { b.publish(ev, false) }

func (b *Bus) publish(ev messages.RunEvent, observe bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.seq++
	ev.Seq = b.seq
	for _, fn := range b.observers {
		if !observe {
			break
		}
		fn(ev)
	}
	for s := range b.subs {
		if s.session != "" && s.session != ev.Session {
			continue
		}
		if !s.offer(ev) {
			b.dropped++
		}
	}
}

// offer delivers ev to s unless its buffer is full, and says whether it did; called with
// the bus locked.
func (s *Subscription) offer(ev messages.RunEvent) bool {
	if s.lost > 0 {
		select {
		case s.ch <- messages.RunEvent{Kind: messages.EventsLost, Lost: s.lost, Time: ev.Time}:
			s.lost = 0
		default:
			s.lost++
			return false
		}
	}
	select {
	case s.ch <- ev:
		return true
	default:
		s.lost++
		return false
	}
}

// Close closes every subscription; later subscriptions start closed and Publish drops all.
func (b *Bus) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		close(s.ch)
	}
}
