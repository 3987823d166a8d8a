//go:build !linux

package procmem

// ReleaseExecutable does nothing outside Linux.
func ReleaseExecutable() (Released, error) { return Released{}, nil }

// ReserveHeap reserves nothing outside Linux.
func ReserveHeap(size int64) (*HeapReserve, error) { return nil, nil }

func (h *HeapReserve) SetHuge(on bool) { h.huge = on }
