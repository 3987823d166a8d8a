package feishu

import (
	"slices"
	"sync"
	"time"
)

// orderWindow is how long the first event of a burst in one chat waits for the others before
// the chat's events are delivered. The SDK hands each long-connection frame to its own
// goroutine (and the webhook server each request), so two messages sent a moment apart can
// reach the handler in either order; the platform may also push them out of order.
const orderWindow = 100 * time.Millisecond

// chatOrder delivers each chat's events one at a time, in the platform's order (create_time,
// then arrival), so that fast messages in one chat reach reef in the order they were sent.
// Different chats do not wait for each other. Redeliveries keep their message id, so dedup
// still applies after ordering.
type chatOrder struct {
	window time.Duration
	mu     sync.Mutex
	chats  map[string]*chatLine
	next   uint64 // arrival counter
}

// chatLine is a chat's events waiting for their turn; a drain goroutine runs them while any wait.
type chatLine struct{ items []*orderItem }

type orderItem struct {
	at      int64 // create_time, ms
	arrival uint64
	run     func()
}

func newChatOrder(window time.Duration) *chatOrder {
	return &chatOrder{window: window, chats: map[string]*chatLine{}}
}

// do runs fn in its turn among chat's events and returns after fn returned.
func (o *chatOrder) do(chat string, at int64, fn func()) {
	done := make(chan struct{})
	o.mu.Lock()
	o.next++
	it := &orderItem{at: at, arrival: o.next, run: func() { defer close(done); fn() }}
	line, busy := o.chats[chat]
	if !busy {
		line = &chatLine{}
		o.chats[chat] = line
	}
	i, _ := slices.BinarySearchFunc(line.items, it, func(a, b *orderItem) int {
		if a.at != b.at {
			return compare(a.at, b.at)
		}
		return compare(a.arrival, b.arrival)
	})
	line.items = slices.Insert(line.items, i, it)
	o.mu.Unlock()
	if !busy {
		go o.drain(chat, line)
	}
	<-done
}

// drain waits for the rest of a burst, then runs the chat's events in order until none waits.
func (o *chatOrder) drain(chat string, line *chatLine) {
	time.Sleep(o.window)
	for {
		o.mu.Lock()
		if len(line.items) == 0 {
			delete(o.chats, chat)
			o.mu.Unlock()
			return
		}
		it := line.items[0]
		line.items = line.items[1:]
		o.mu.Unlock()
		it.run()
	}
}

func compare[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
