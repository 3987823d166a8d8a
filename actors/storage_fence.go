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

// fence checks the leases of a batch's owners in its transaction; nil without a cluster or
// owners.
func fence(tx persistence.Tx, cluster Ownership, batch []*storeWrite) (map[string]bool, error) {
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
		if e, seen := claims[w.Owner]; !seen || e == 0 {
			claims[w.Owner] = w.Epoch
		}
	}
	if claims == nil {
		return nil, nil
	}
	lost, err := cluster.Fence(tx, claims)
	if err != nil {
		return nil, fmt.Errorf("storage: fence: %w", err)
	}
	return lost, nil
}

// fencedErr is the answer to w after its batch's commit ended with err.
func fencedErr(lost map[string]bool, w *storeWrite, err error) error {
	if err == nil && w.Owner != "" && lost[w.Owner] {
		return ErrFenced
	}
	return err
}
