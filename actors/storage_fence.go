package actors

import (
	"errors"
	"fmt"

	"github.com/reefgw/reef/persistence"
)

// ErrFenced answers a write whose session this node no longer runs: in cluster mode its
// partition's lease expired or moved to another node (internal/cluster). Nothing of the
// write was kept; the new owner runs the session from what the store holds.
var ErrFenced = errors.New("storage: the session's partition is no longer this node's")

// Ownership is a cluster node's share of the sessions (internal/cluster.Node); Deps.Cluster
// holds it, nil on a single node.
type Ownership interface {
	// Owns reports whether this node runs key's session now, and under which lease epoch.
	Owns(key string) (epoch int64, ok bool)
	// Fence checks inside tx the leases of claims (session key → the epoch its Session
	// started under) and returns the keys whose lease this node no longer holds.
	Fence(tx persistence.Tx, claims map[string]int64) (lost map[string]bool, err error)
}

// fence checks the leases of a batch's owners in its transaction and returns the writes
// that must not be applied; nil without a cluster or owners. A batch may hold writes of one
// session under two epochs (a write that waited out a storage outage, and one of the Session
// the node started after it took the partition again): the older epoch is stale without
// asking, and the lease is checked for the newest.
func fence(tx persistence.Tx, cluster Ownership, batch []*storeWrite) (map[*storeWrite]bool, error) {
	if cluster == nil {
		return nil, nil
	}
	var claims map[string]int64
	for _, w := range batch {
		if w.Owner == "" {
			continue
		}
		if claims == nil {
			claims = map[string]int64{}
		}
		// 0 is "the current epoch": a write that names one decides, the newest named wins.
		if e, seen := claims[w.Owner]; !seen || e == 0 || w.Epoch > e {
			claims[w.Owner] = w.Epoch
		}
	}
	if claims == nil {
		return nil, nil
	}
	lostKeys, err := cluster.Fence(tx, claims)
	if err != nil {
		return nil, fmt.Errorf("storage: fence: %w", err)
	}
	lost := map[*storeWrite]bool{}
	for _, w := range batch {
		if w.Owner != "" && (lostKeys[w.Owner] || w.Epoch != 0 && w.Epoch < claims[w.Owner]) {
			lost[w] = true
		}
	}
	return lost, nil
}

// fencedErr is the answer to w after its batch's commit ended with err.
func fencedErr(lost map[*storeWrite]bool, w *storeWrite, err error) error {
	if err == nil && lost[w] {
		return ErrFenced
	}
	return err
}
