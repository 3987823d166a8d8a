package procmem

import (
	"sync"
	"testing"
	"time"
)

// hugeLog records what a Burst asks of its heap.
type hugeLog struct {
	mu       sync.Mutex
	set      []bool
	collects int
}

func (h *hugeLog) Collect() {
	h.mu.Lock()
	h.collects++
	h.mu.Unlock()
}

func (h *hugeLog) SetHuge(on bool) {
	h.mu.Lock()
	h.set = append(h.set, on)
	h.mu.Unlock()
}

func (h *hugeLog) calls() []bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bool(nil), h.set...)
}

func TestBurstArmsAtTheRateAndDisarmsAfterTheHold(t *testing.T) {
	heap := &hugeLog{}
	now := time.Unix(1000, 0)
	var clock sync.Mutex
	b := &Burst{heap: heap, rate: 100, hold: 50 * time.Millisecond, now: func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return now
	}}
	advance := func(d time.Duration) {
		clock.Lock()
		now = now.Add(d)
		clock.Unlock()
	}
	defer b.Close()

	b.Note(60)
	heap.mu.Lock()
	collected := heap.collects > 0
	heap.mu.Unlock()
	if !collected {
		t.Error("the first message did not let the reserve's collection run")
	}
	advance(1100 * time.Millisecond) // a new second: the 60 do not count
	b.Note(60)
	if b.Armed() || len(heap.calls()) != 0 {
		t.Fatalf("armed below the rate: %v", heap.calls())
	}
	b.Note(40) // 100 within the second
	if !b.Armed() {
		t.Fatal("not armed at 100 messages within a second")
	}
	b.Note(500) // already armed: nothing more asked
	if got := heap.calls(); len(got) != 1 || !got[0] {
		t.Fatalf("heap asked %v, want [true]", got)
	}

	// The hold runs from the last busy second (the timer checks the clock when it fires): a
	// busy second before the deadline extends it.
	advance(40 * time.Millisecond)
	b.Note(100)                        // armed until 90 ms after arming, by the clock
	advance(30 * time.Millisecond)     // past the first deadline, before the second
	time.Sleep(120 * time.Millisecond) // the timer fires at least once
	if !b.Armed() {
		t.Fatal("disarmed although a busy second extended the hold")
	}
	advance(time.Second) // past the deadline: the timer's next check disarms
	deadline := time.Now().Add(5 * time.Second)
	for b.Armed() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if b.Armed() {
		t.Fatal("still armed after the hold")
	}
	if got := heap.calls(); len(got) != 2 || got[1] {
		t.Fatalf("heap asked %v, want [true false]", got)
	}

	// Armed again by the next burst; Close disarms.
	b.Note(100)
	b.Close()
	b.Note(100)
	if b.Armed() {
		t.Fatal("armed after Close")
	}
	if got := heap.calls(); len(got) != 4 || !got[2] || got[3] {
		t.Fatalf("heap asked %v, want [true false true false]", got)
	}
}

func TestNilBurst(t *testing.T) {
	var b *Burst
	b.Note(1000)
	b.Close()
	if b.Armed() || NewBurst(nil, 1, time.Second) != nil {
		t.Fatal("a nil Burst armed something")
	}
}
