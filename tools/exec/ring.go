package exec

import "sync"

// ring keeps the last max bytes a background process wrote, addressed by absolute offset
// (bytes written since the start), so a reader can ask for what came after what it saw.
type ring struct {
	mu    sync.Mutex
	max   int
	buf   []byte // grows to twice max, then keeps its last max bytes
	start int64  // absolute offset of buf[0]
}

func newRing(max int) *ring { return &ring{max: max} }

// Write keeps p; it never fails, so the process never sees a broken pipe.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= r.max {
		r.start += int64(len(r.buf) + len(p) - r.max)
		r.buf = append(r.buf[:0], p[len(p)-r.max:]...)
		return n, nil
	}
	r.buf = append(r.buf, p...)
	if len(r.buf) > 2*r.max {
		drop := len(r.buf) - r.max
		k := copy(r.buf, r.buf[drop:])
		r.buf = r.buf[:k]
		r.start += int64(drop)
	}
	return n, nil
}

// since returns what was written from offset from on (from the oldest byte kept when from is
// older: dropped is how many bytes the reader missed), and the offset after it.
func (r *ring) since(from int64) (data []byte, dropped, next int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lo := r.start
	if len(r.buf) > r.max {
		lo = r.start + int64(len(r.buf)-r.max)
	}
	if from < lo {
		dropped, from = lo-from, lo
	}
	end := r.start + int64(len(r.buf))
	if from > end {
		from = end
	}
	return append([]byte(nil), r.buf[from-r.start:]...), dropped, end
}

// total is how many bytes were written in all.
func (r *ring) total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start + int64(len(r.buf))
}
