package cluster

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// reach tracks whether the database answers a loop that asks it again and again (the
// Node's rounds), so that an outage is logged once when it begins and once when it ends
// instead of at every round: the Storage actor says the same for the writes.
type reach struct {
	mu    sync.Mutex
	since time.Time // zero: the database answered the last time
}

// failed notes a failure to reach the database: the first of an outage is a warning, the
// others are debug lines.
func (r *reach) failed(log zerolog.Logger, err error, what string) {
	r.mu.Lock()
	first := r.since.IsZero()
	if first {
		r.since = time.Now()
	}
	r.mu.Unlock()
	ev := log.Debug()
	if first {
		ev = log.Warn()
	}
	ev.Err(err).Msg("cluster: " + what + " (the database does not answer; its leases lapse if this lasts)")
}

// answered notes that the database answered, and reports whether it ends an outage.
func (r *reach) answered(log zerolog.Logger) bool {
	r.mu.Lock()
	since := r.since
	r.since = time.Time{}
	r.mu.Unlock()
	if since.IsZero() {
		return false
	}
	log.Warn().Str("outage", time.Since(since).Round(time.Millisecond).String()).
		Msg("cluster: the database answers again; partitions are planned again from the next round")
	return true
}
