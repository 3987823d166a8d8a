package cluster

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
)

// Node is one reef process's membership in the cluster: its heartbeat, the leases it holds
// and the rebalancing that spreads partitions over the live members (Plan). Run is its loop;
// whoever starts Run cancels it, then calls Leave on a clean stop.
//
// Each round (every TTL/4) it heartbeats, renews every lease it holds in one statement, reads
// the members and the live leases, and acts on its part of the plan: it acquires the
// partitions the plan gives it that nobody holds (or whose holder died: the lease expired),
// and hands over those the plan gives to another node in two steps, first no longer running
// them (OnChange reports them lost) and a round later releasing their leases, so the writes
// and sends of their last runs end before the next owner starts.
//
// A partition is active (Owns) while its lease is held, not being handed over, and not past
// its expiry by this process's own clock: the start of the renewal that extended it plus the
// TTL. A process frozen past its lease (SIGSTOP, a VM paused) finds on waking that its
// leases ran out by the monotonic clock, before any statement answers; the database's
// fencing (Fence) refuses its writes in any case.
type Node struct {
	ID       string
	leases   *Leases
	n        int
	log      zerolog.Logger
	onChange func(gained, lost []int)

	db reach // the database answering the rounds (reach.go)

	mu      sync.Mutex
	held    map[int]*hold
	changed chan struct{} // closed at the end of each round (WaitRound)
}

// hold is a lease this node holds, with its local expiry.
type hold struct {
	lease    Lease
	until    time.Time // by the local monotonic clock
	draining bool      // handed to another node: released at the next round
}

// NewNode returns the membership of node id among n partitions; onChange (may be nil) is
// called from Run's goroutine with the partitions that became active and those that stopped
// being active, in that round.
func NewNode(leases *Leases, id string, n int, onChange func(gained, lost []int), log zerolog.Logger) *Node {
	return &Node{ID: id, leases: leases, n: n, onChange: onChange, log: log.With().Str("node", id).Logger(),
		held: map[int]*hold{}, changed: make(chan struct{})}
}

// OnChange sets what Run calls when partitions became active or stopped being active; set
// it before Run.
func (nd *Node) OnChange(fn func(gained, lost []int)) { nd.onChange = fn }

// Partitions returns the number of partitions.
func (nd *Node) Partitions() int { return nd.n }

// Run heartbeats and rebalances until ctx ends. It does not release the leases: Leave does,
// after the gateway stopped writing.
func (nd *Node) Run(ctx context.Context) {
	every := max(nd.leases.ttl/4, 100*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		nd.Round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Round runs one round of the loop (Run's body; tests call it directly).
func (nd *Node) Round(ctx context.Context) {
	gained, lost := nd.round(ctx)
	nd.mu.Lock()
	close(nd.changed)
	nd.changed = make(chan struct{})
	nd.mu.Unlock()
	if (len(gained) > 0 || len(lost) > 0) && nd.onChange != nil {
		nd.onChange(gained, lost)
	}
}

func (nd *Node) round(ctx context.Context) (gained, lost []int) {
	start := time.Now()
	ttl := nd.leases.ttl
	// A round never runs past half a lease: a statement that waits (a lease row locked by
	// a frozen node's open transaction, until PostgreSQL ends it) must not keep this node
	// from renewing its own leases in the next round.
	ctx, cancel := context.WithTimeout(ctx, ttl/2)
	defer cancel()
	// Hand over what the last round marked: its runs have stopped by now.
	if err := nd.leases.Release(ctx, nd.ID, nd.draining()); err != nil {
		nd.db.failed(nd.log, err, "could not release handed-over partitions; they expire instead")
	} else {
		nd.forgetDraining()
	}
	if err := nd.leases.Heartbeat(ctx, nd.ID); err != nil {
		nd.db.failed(nd.log, err, "heartbeat failed")
		return nil, nd.expire()
	}
	renewed, err := nd.leases.RenewAll(ctx, nd.ID, nd.Held())
	if err != nil {
		nd.db.failed(nd.log, err, "renewing leases failed")
		return nil, nd.expire()
	}
	lost = nd.renewed(renewed, start.Add(ttl))
	if nd.db.answered(nd.log) {
		// After an outage every node heartbeats once before any plans: the plan then sees
		// all the nodes that lived through it, and the writes their Storage held (a reply's
		// sent mark) commit before another node takes their sessions.
		return nil, lost
	}
	members, err := nd.leases.Members(ctx)
	if err != nil {
		nd.db.failed(nd.log, err, "members")
		return nil, lost
	}
	live, err := nd.leases.Live(ctx)
	if err != nil {
		nd.db.failed(nd.log, err, "leases")
		return nil, lost
	}
	owner := map[int]string{}
	for _, x := range live {
		owner[x.Partition] = x.Owner
	}
	if !slices.Contains(members, nd.ID) {
		members = append(members, nd.ID) // the heartbeat just written; a slow clock cannot drop it
	}
	plan := Plan(members, owner, nd.n)
	for p := range nd.n {
		mine := plan[p] == nd.ID
		nd.mu.Lock()
		h := nd.held[p]
		nd.mu.Unlock()
		switch {
		case h != nil && !mine && !h.draining:
			nd.mu.Lock()
			h.draining = true
			nd.mu.Unlock()
			lost = append(lost, p)
		case h == nil && mine && (owner[p] == "" || owner[p] == nd.ID || !slices.Contains(members, owner[p])):
			t := time.Now()
			lease, err := nd.leases.Acquire(ctx, nd.ID, p)
			if errors.Is(err, ErrHeld) {
				continue // its holder's lease has not run out yet
			}
			if err != nil {
				nd.log.Warn().Err(err).Int("partition", p).Msg("cluster: acquire")
				continue
			}
			nd.mu.Lock()
			nd.held[p] = &hold{lease: lease, until: t.Add(ttl)}
			nd.mu.Unlock()
			gained = append(gained, p)
		}
	}
	if len(gained) > 0 || len(lost) > 0 {
		nd.log.Info().Int("gained", len(gained)).Int("lost", len(lost)).Int("held", len(nd.Held())).
			Int("members", len(members)).Msg("cluster: partitions moved")
		nd.log.Debug().Ints("gained", gained).Ints("lost", lost).Msg("cluster: partitions moved")
	}
	return gained, lost
}

// renewed keeps the leases the renewal extended (until: their new local expiry) and drops
// the others, returning those that were active.
func (nd *Node) renewed(leases []Lease, until time.Time) (lost []int) {
	ok := map[int]Lease{}
	for _, x := range leases {
		ok[x.Partition] = x
	}
	nd.mu.Lock()
	defer nd.mu.Unlock()
	for p, h := range nd.held {
		x, kept := ok[p]
		if !kept {
			if !h.draining {
				lost = append(lost, p)
			}
			delete(nd.held, p)
			nd.log.Warn().Int("partition", p).Int64("epoch", h.lease.Epoch).Msg("cluster: lease lost (it expired or moved)")
			continue
		}
		h.lease, h.until = x, until
	}
	slices.Sort(lost)
	return lost
}

// expire drops the leases past their local expiry (the database did not answer), returning
// the active ones among them.
func (nd *Node) expire() (lost []int) {
	now := time.Now()
	nd.mu.Lock()
	defer nd.mu.Unlock()
	for p, h := range nd.held {
		if now.Before(h.until) {
			continue
		}
		if !h.draining {
			lost = append(lost, p)
		}
		delete(nd.held, p)
	}
	slices.Sort(lost)
	return lost
}

func (nd *Node) draining() []Lease {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	var out []Lease
	for _, h := range nd.held {
		if h.draining {
			out = append(out, h.lease)
		}
	}
	return out
}

func (nd *Node) forgetDraining() {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	for p, h := range nd.held {
		if h.draining {
			delete(nd.held, p)
		}
	}
}

// Held returns the leases this node holds, by partition.
func (nd *Node) Held() []Lease {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	out := make([]Lease, 0, len(nd.held))
	for _, h := range nd.held {
		out = append(out, h.lease)
	}
	slices.SortFunc(out, func(a, b Lease) int { return a.Partition - b.Partition })
	return out
}

// Active reports whether this node runs partition p now, and under which epoch.
func (nd *Node) Active(p int) (int64, bool) {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	h := nd.held[p]
	if h == nil || h.draining || !time.Now().Before(h.until) {
		return 0, false
	}
	return h.lease.Epoch, true
}

// Owns reports whether this node runs the session of key now, and under which epoch.
func (nd *Node) Owns(key string) (int64, bool) { return nd.Active(Partition(key, nd.n)) }

// Fence checks, inside tx, the leases that the writes of a batch are made under: claims maps
// each writing session's key to the epoch it was started under (0: the current one). It
// returns the keys whose lease this node no longer holds with that epoch; their writes must
// not be applied. The others' leases are locked until tx ends (FenceAll).
func (nd *Node) Fence(tx persistence.Tx, claims map[string]int64) (lost map[string]bool, err error) {
	lost = map[string]bool{}
	byPart := map[int]Lease{}
	nd.mu.Lock()
	for key, epoch := range claims {
		p := Partition(key, nd.n)
		h := nd.held[p]
		if h == nil || epoch != 0 && epoch != h.lease.Epoch {
			lost[key] = true
			continue
		}
		byPart[p] = h.lease
	}
	nd.mu.Unlock()
	if len(byPart) == 0 {
		return lost, nil
	}
	live, err := FenceAll(tx, slices.Collect(maps.Values(byPart)))
	if err != nil {
		return nil, err
	}
	for key := range claims {
		if p := Partition(key, nd.n); !lost[key] && !live[p] {
			lost[key] = true
		}
	}
	return lost, nil
}

// Leave ends this node's membership on a clean stop: its leases are released and its
// member row removed, so the others take its partitions over at their next round instead
// of after the leases expire. Call it after Run ended and the gateway stopped writing.
func (nd *Node) Leave(ctx context.Context) error {
	held := nd.Held()
	nd.mu.Lock()
	nd.held = map[int]*hold{}
	nd.mu.Unlock()
	return errors.Join(nd.leases.Release(ctx, nd.ID, held), nd.leases.Leave(ctx, nd.ID))
}

// WaitRound waits for the next round to end (tests).
func (nd *Node) WaitRound(ctx context.Context) error {
	nd.mu.Lock()
	ch := nd.changed
	nd.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
