//go:build !linux

package procmem

// ReleaseExecutable does nothing outside Linux.
func ReleaseExecutable() (Released, error) { return Released{}, nil }

// ReserveHeap reserves nothing outside Linux: it returns nil.
func ReserveHeap(size int64) *HeapReserve { return nil }

// Collect does nothing outside Linux.
func (h *HeapReserve) Collect() {}

// SetHuge does nothing outside Linux.
func (h *HeapReserve) SetHuge(on bool) {}

// Wait reports no reserve outside Linux.
func (h *HeapReserve) Wait() (int64, error) { return 0, nil }
