package procmem

import (
	"sync"
	"time"
)

// A burst of work (a thousand conversations at once) grows the heap by tens of megabytes in a
// second, and the kernel maps that memory a 4 KiB page at a time, on first touch. Each of those
// page faults costs about a microsecond on bare metal, and 10-15 µs in some virtual machines
// (measured on a 2-vCPU Firecracker VM: 25,000 faults, a third of the gateway's CPU over such
// a burst). With transparent huge pages the kernel maps 2 MiB per fault instead.
//
// Many systems enable huge pages only where a program asks for them (MADV_HUGEPAGE), and the
// Go runtime does not ask for its heap. ReserveHeap sets aside heap address space for bursts
// and Burst asks for huge pages there while messages come in fast, and stops asking once they
// have not for a while: on a quiet process, huge pages would keep whole 2 MiB blocks resident
// for a few live objects, and the kernel's khugepaged would merge freed memory back into them.

// HeapReserve is heap address space the runtime has mapped and not used yet, where later
// allocations land. See ReserveHeap.
type HeapReserve struct {
	p         uintptr // where the reserve's object was
	size      int64
	gcPercent int // GOGC before ReserveHeap paused the collector
	once      sync.Once
	done      chan struct{} // closed when the reserve is ready (or known not to be)

	mu         sync.Mutex
	start, end uintptr // 2 MiB-aligned; empty until made, or when none could be
	err        error
	want, huge bool // huge pages asked for; and so advised
}

// Burst arms huge pages on a HeapReserve while messages arrive at rate a second or faster,
// and disarms them hold after the last such second. The first message also lets the
// reserve's collection run, should start-up not have yet (HeapReserve.Collect). Its zero
// value is not usable; see NewBurst. A nil *Burst ignores Note.
type Burst struct {
	heap interface { // a *HeapReserve
		Collect()
		SetHuge(on bool)
	}
	rate int
	hold time.Duration
	now  func() time.Time

	mu     sync.Mutex
	second time.Time   // start of the second being counted
	count  int         // messages in it
	until  time.Time   // armed until then
	timer  *time.Timer // set while armed
	closed bool
}

// NewBurst returns a Burst over heap; nil when heap is nil (nothing to arm).
func NewBurst(heap *HeapReserve, rate int, hold time.Duration) *Burst {
	if heap == nil {
		return nil
	}
	return &Burst{heap: heap, rate: rate, hold: hold, now: time.Now}
}

// Note counts n messages that just arrived.
func (b *Burst) Note(n int) {
	if b == nil {
		return
	}
	b.heap.Collect() // should start-up not have yet: before the messages grow the heap
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if now.Sub(b.second) >= time.Second {
		b.second, b.count = now, 0
	}
	b.count += n
	if b.count < b.rate {
		return
	}
	b.until = now.Add(b.hold)
	if b.timer != nil { // armed: its timer finds the new deadline
		return
	}
	b.heap.SetHuge(true) // before the burst's allocations, which follow this message
	b.timer = time.AfterFunc(b.hold, b.expire)
}

// expire disarms once the hold passed since the last busy second, or waits for it.
func (b *Burst) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.timer == nil {
		return
	}
	if left := b.until.Sub(b.now()); left > 0 {
		b.timer.Reset(left)
		return
	}
	b.timer = nil
	b.heap.SetHuge(false)
}

// Close stops the timer and disarms.
func (b *Burst) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
		b.heap.SetHuge(false)
	}
}

// Armed reports whether huge pages are asked for now.
func (b *Burst) Armed() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.timer != nil
}
