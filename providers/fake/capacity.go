package fake

import (
	"sync"
	"time"
)

// Capacity makes a fake endpoint behave like a provider with a concurrency limit: it serves
// at most Max requests at once and answers every request beyond that with 429 and
// Retry-After, without playing a reply of the script. The zero value (or nil) serves
// everything. Safe for concurrent use.
type Capacity struct {
	Max        int           // requests served at once; 0 = no limit
	RetryAfter time.Duration // sent with each 429

	mu        sync.Mutex
	serving   int
	maxServed int
	served    int
	rejected  int
}

// enter admits a request, or reports false when it is over the limit (a 429).
func (c *Capacity) enter() bool {
	if c == nil || c.Max <= 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.serving >= c.Max {
		c.rejected++
		return false
	}
	c.serving++
	c.served++
	c.maxServed = max(c.maxServed, c.serving)
	return true
}

// leave ends a request enter admitted.
func (c *Capacity) leave() {
	if c == nil || c.Max <= 0 {
		return
	}
	c.mu.Lock()
	c.serving--
	c.mu.Unlock()
}

// CapacityStats are what a Capacity saw.
type CapacityStats struct {
	Served    int // requests admitted
	Rejected  int // requests answered 429
	MaxServed int // most requests served at once
}

// Stats returns what c saw so far.
func (c *Capacity) Stats() CapacityStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CapacityStats{Served: c.served, Rejected: c.rejected, MaxServed: c.maxServed}
}
