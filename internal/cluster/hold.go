package cluster

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Holder takes and keeps one node's leases on named units of work. Hold is the gate a
// piece of work asks before it starts (a channel's inbound loop, the Timer): it blocks
// until this node holds the unit, then keeps the lease renewed until the work stops.
//
// A holder that cannot renew (the database is unreachable, or another node took the unit
// after this one was paused) ends the work's context before the lease can expire: renewals
// run every ttl/4, and the work stops once ttl - ttl/4 passed since the last renewal that
// succeeded was sent, measured on this node's monotonic clock, so the work has stopped
// before the database lets another node take it. A unit whose holder died is taken over by
// another node's waiting Hold within ttl + ttl/4.
type Holder struct {
	leases *WorkLeases
	node   string
	log    zerolog.Logger
	every  time.Duration

	mu   sync.Mutex
	held map[string]Work
}

// NewHolder returns the holder of node's work leases. It starts nothing.
func NewHolder(leases *WorkLeases, node string, log zerolog.Logger) *Holder {
	return &Holder{leases: leases, node: node, log: log.With().Str("node", node).Logger(),
		every: max(leases.ttl/4, 10*time.Millisecond), held: map[string]Work{}}
}

// Node is the name of the node whose leases this holder keeps.
func (h *Holder) Node() string { return h.node }

// Nodes counts the cluster's live nodes (WorkLeases.Nodes): a connector with several units
// of work (a Discord bot's shards, channels.Spreader) holds only its share of them.
func (h *Holder) Nodes(ctx context.Context) (int, error) { return h.leases.Nodes(ctx) }

// Held lists the units this node holds now, by name.
func (h *Holder) Held() []Work {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Work, 0, len(h.held))
	for _, w := range h.held {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Work) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Hold blocks until this node holds the unit name, or ctx ends (then it returns ctx's
// error). It returns a context that ends when the lease is lost or ctx ends, and a release
// function the caller must call when the work stops (like context.WithCancel's): it ends
// that context and gives the lease back at once, so another node takes over without waiting
// for it to expire.
func (h *Holder) Hold(ctx context.Context, name string) (context.Context, context.CancelFunc, error) {
	logged, failing := false, false
	for {
		sent := time.Now()
		try, cancel := context.WithTimeout(ctx, h.every)
		w, err := h.leases.Acquire(try, h.node, name)
		cancel()
		if err == nil {
			return h.keep(ctx, w, sent)
		}
		if !errors.Is(err, ErrHeld) && ctx.Err() == nil {
			ev := h.log.Debug() // an outage of the database: warned once per wait
			if !failing {
				ev, failing = h.log.Warn(), true
			}
			ev.Err(err).Str("work", name).Msg("cluster: could not ask for a work lease; trying again")
		} else if !logged && ctx.Err() == nil {
			h.log.Info().Str("work", name).Msg("cluster: another node holds this work; waiting to take it over")
			logged = true
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(h.every):
		}
	}
}

// keep renews w until its context ends, and releases it then unless it was lost.
func (h *Holder) keep(ctx context.Context, w Work, renewedAt time.Time) (context.Context, context.CancelFunc, error) {
	held, cancel := context.WithCancel(ctx)
	h.mu.Lock()
	h.held[w.Name] = w
	h.mu.Unlock()
	h.log.Info().Str("work", w.Name).Int64("epoch", w.Epoch).Msg("cluster: holding work")
	done := make(chan struct{})
	go func() {
		defer close(done)
		lost := h.renew(held, w, renewedAt)
		cancel()
		h.mu.Lock()
		if cur, ok := h.held[w.Name]; ok && cur.Epoch == w.Epoch {
			delete(h.held, w.Name)
		}
		h.mu.Unlock()
		if lost {
			return
		}
		rel, stop := context.WithTimeout(context.Background(), h.every)
		defer stop()
		if err := h.leases.Release(rel, w); err != nil {
			h.log.Warn().Err(err).Str("work", w.Name).Msg("cluster: could not release a work lease; it expires on its own")
			return
		}
		h.log.Info().Str("work", w.Name).Msg("cluster: released work")
	}()
	return held, func() { cancel(); <-done }, nil
}

// renew keeps w renewed until held ends (false) or the lease is lost (true).
func (h *Holder) renew(held context.Context, w Work, renewedAt time.Time) (lost bool) {
	failing := false
	tick := time.NewTicker(h.every)
	defer tick.Stop()
	for {
		select {
		case <-held.Done():
			return false
		case <-tick.C:
		}
		if time.Since(renewedAt) >= h.leases.ttl-h.every {
			h.log.Warn().Str("work", w.Name).Msg("cluster: could not renew a work lease in time; stopping the work before it expires")
			return true
		}
		sent := time.Now()
		try, cancel := context.WithTimeout(held, h.every)
		next, err := h.leases.Renew(try, w)
		cancel()
		switch {
		case errors.Is(err, ErrFenced):
			h.log.Warn().Str("work", w.Name).Msg("cluster: a work lease moved to another node; stopping the work")
			return true
		case err != nil:
			if held.Err() != nil {
				return false
			}
			ev := h.log.Debug() // the first failure in a row is the warning
			if !failing {
				ev, failing = h.log.Warn(), true
			}
			ev.Err(err).Str("work", w.Name).Msg("cluster: renew a work lease")
		default:
			failing = false
			w, renewedAt = next, sent
			h.mu.Lock()
			h.held[w.Name] = w
			h.mu.Unlock()
		}
	}
}
