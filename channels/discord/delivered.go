package discord

import (
	"sync"
	"time"
)

// deliveredTTL is how long the bot remembers the parts of a reply it delivered: longer than
// the Connector retries a reply (24 h by default).
const deliveredTTL = 25 * time.Hour

// delivered remembers, by nonce, the message each delivered part of an outbox row (a text
// chunk, a message of files, a note) became. A reply sent again after a failure part way
// skips the parts Discord has: its enforced nonce protects them only for a few minutes,
// and a retry may come hours later.
type delivered struct {
	mu     sync.Mutex
	ids    map[string]deliveredPart
	pruned time.Time
}

type deliveredPart struct {
	id string
	at time.Time
}

// get returns the message a part became, if it was delivered.
func (d *delivered) get(nonce string) (string, bool) {
	if nonce == "" {
		return "", false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.ids[nonce]
	return p.id, ok
}

// put notes that the part with nonce became message id, and forgets parts older than
// deliveredTTL now and then.
func (d *delivered) put(nonce, id string) {
	if nonce == "" {
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = map[string]deliveredPart{}
	}
	d.ids[nonce] = deliveredPart{id: id, at: now}
	if now.Sub(d.pruned) < time.Hour {
		return
	}
	d.pruned = now
	for k, p := range d.ids {
		if now.Sub(p.at) > deliveredTTL {
			delete(d.ids, k)
		}
	}
}
