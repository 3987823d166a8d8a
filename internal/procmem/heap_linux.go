package procmem

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

// ReserveHeap sets aside up to size bytes of heap address space for bursts. It allocates
// them in one object, which the runtime maps without touching (fresh memory is known to be
// zero), notes where it is and drops it; a garbage collection then frees it. The runtime
// never unmaps heap memory, and it places later allocations at the lowest free addresses, so
// the heap grows into the reserve; Burst arms huge pages there.
//
// Call it first thing in main: an allocation that reuses memory the heap freed is cleared,
// which would touch every page, so once a garbage collection has run it reserves nothing.
// The collection that frees the object costs a few milliseconds: ReserveHeap pauses the
// collector, and Collect, once start-up is over, lets it run (and SetHuge take effect); in
// any case it runs again after maxPause. The reserve is at most a quarter of the machine's
// memory, and none when the kernel does not overcommit (vm.overcommit_memory=2), where
// mapped memory counts against a hard limit, nor in a binary built with -race. It costs
// address space, not memory: nothing in it is resident until used.
func ReserveHeap(size int64) *HeapReserve {
	if raceEnabled {
		size = 0
	}
	return reserveHeap(size)
}

func reserveHeap(size int64) *HeapReserve {
	h := &HeapReserve{done: make(chan struct{})}
	p, size, err := allocateReserve(size, &h.gcPercent)
	if p == 0 {
		h.once.Do(func() {})
		h.finish(0, 0, err)
		return h
	}
	h.p, h.size = p, size
	time.AfterFunc(maxPause, h.Collect) // should nobody call it
	return h
}

// maxPause bounds how long ReserveHeap keeps the collector paused.
const maxPause = 2 * time.Second

// Collect lets the collector run again, once, and the reserve is ready when a collection
// has freed its object. It returns at once.
func (h *HeapReserve) Collect() {
	h.once.Do(func() {
		debug.SetGCPercent(h.gcPercent)
		go func() { h.finish(settle(h.p, h.size)) }()
	})
}

func allocateReserve(size int64, gcPercent *int) (uintptr, int64, error) {
	if size < 2*hugePage {
		return 0, 0, nil
	}
	if gcCycles() > 0 {
		return 0, 0, errors.New("procmem: the heap has been collected already; no reserve")
	}
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err == nil && bytes.TrimSpace(b)[0] == '2' {
		return 0, 0, nil
	}
	if total, err := memTotal(); err == nil && total > 0 {
		size = min(size, total/4)
	}
	if size < 2*hugePage {
		return 0, 0, nil
	}
	*gcPercent = debug.SetGCPercent(-1)
	return allocate(size), size, nil
}

// settle waits for the collection that frees the reserve's object (forcing one should the
// object have outlived it: it would have set the heap's goal) and returns the reserve's range.
func settle(p uintptr, size int64) (start, end uintptr, err error) {
	for i := 0; gcCycles() == 0 && i < 100; i++ {
		time.Sleep(time.Millisecond)
	}
	if gcCycles() == 0 || heapGoal() > uint64(size) { // none started (GOGC=off), or too late
		runtime.GC()
	}
	start, end = (p+hugePage-1)&^(hugePage-1), (p+uintptr(size))&^(hugePage-1)
	// The range is mapped like the rest of the heap (madvise fails otherwise).
	if err := madvise(start, end, unix.MADV_NORMAL); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

func (h *HeapReserve) finish(start, end uintptr, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.start, h.end, h.err = start, end, err
	if h.want {
		h.advise(true)
	}
	close(h.done)
}

// allocate allocates size bytes and returns where they were; nothing refers to them after.
//
//go:noinline
func allocate(size int64) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(make([]byte, size))))
}

// Wait waits until the reserve is ready and returns its size: 0 when there is none (err
// says why, unless the system is one where none is made).
func (h *HeapReserve) Wait() (int64, error) {
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	return int64(h.end - h.start), h.err
}

// SetHuge asks for huge pages in the reserve (MADV_HUGEPAGE) or forbids them
// (MADV_NOHUGEPAGE: khugepaged then leaves freed memory alone, and memory the runtime gives
// back splits the huge pages it was part of). Before the reserve is ready, it takes effect
// when it is.
func (h *HeapReserve) SetHuge(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.want = on
	h.advise(on)
}

func (h *HeapReserve) advise(on bool) {
	if h.huge == on || h.end <= h.start {
		return
	}
	advice := unix.MADV_NOHUGEPAGE
	if on {
		advice = unix.MADV_HUGEPAGE
	}
	if madvise(h.start, h.end, advice) == nil {
		h.huge = on
	}
}

func madvise(start, end uintptr, advice int) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, uintptr(advice)); errno != 0 {
		return fmt.Errorf("procmem: madvise(%d) %x-%x: %w", advice, start, end, errno)
	}
	return nil
}

// heapGoal is the heap size at which the next garbage collection is due.
func heapGoal() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NextGC
}

// gcCycles is how many garbage collections the process has completed. (Not
// runtime.ReadMemStats, which stops the world and costs start-up 1.6 ms, nor runtime/metrics,
// whose package initialisation costs most of a millisecond.)
func gcCycles() int64 {
	var st debug.GCStats
	debug.ReadGCStats(&st)
	return st.NumGC
}

// memTotal is the machine's memory, in bytes.
func memTotal() (int64, error) {
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return 0, err
	}
	return int64(info.Totalram) * int64(info.Unit), nil
}
