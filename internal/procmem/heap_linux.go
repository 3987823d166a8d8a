package procmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugePage = 2 << 20

// ReserveHeap sets aside up to size bytes of heap address space for bursts: it allocates
// them in one object, which the runtime maps without touching (fresh memory is known to be
// zero), notes where they are, and frees them. The runtime never unmaps heap memory, and it
// places later allocations at the lowest free addresses, so the heap grows into the reserve;
// Burst arms huge pages there.
//
// It must run early, before the heap has freed memory of its own (an allocation that
// reuses freed memory is cleared, which would touch every page): at the start of main. After
// the first garbage collection it reserves nothing. The reserve is at most a quarter of the machine's memory, and none when the kernel does not
// overcommit (vm.overcommit_memory=2), where mapped memory counts against a hard limit.
// Reserving costs address space, not memory: nothing in it is resident until used.
func ReserveHeap(size int64) (*HeapReserve, error) {
	if size < 2*hugePage || gcCycles() > 0 {
		return nil, nil
	}
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err == nil && bytes.TrimSpace(b)[0] == '2' {
		return nil, nil
	}
	if total, err := memTotal(); err == nil && total > 0 {
		size = min(size, total/4)
	}
	if size < 2*hugePage {
		return nil, nil
	}
	b := make([]byte, size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	h := &HeapReserve{start: (p + hugePage - 1) &^ (hugePage - 1), end: (p + uintptr(size)) &^ (hugePage - 1)}
	runtime.KeepAlive(b)
	b = nil
	debug.FreeOSMemory() // frees it (and resets the heap goal it raised)
	if h.end <= h.start {
		return nil, errors.New("procmem: heap reserve too small")
	}
	// Check that the range is mapped, as the rest of the heap (madvise fails otherwise).
	if err := madvise(h.start, h.end, unix.MADV_NORMAL); err != nil {
		return nil, err
	}
	return h, nil
}

// SetHuge asks for huge pages in the reserve (MADV_HUGEPAGE) or forbids them
// (MADV_NOHUGEPAGE: khugepaged then leaves freed memory alone, and memory the runtime gives
// back splits the huge pages it was part of).
func (h *HeapReserve) SetHuge(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.huge == on {
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

// gcCycles is how many garbage collections the process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 1 // unknown: assume the heap has freed memory
	}
	return s[0].Value.Uint64()
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("MemTotal:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("procmem: no MemTotal in /proc/meminfo")
}
