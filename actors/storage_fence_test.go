package actors

import (
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
)

// fakeOwnership is a cluster node's share for tests: the keys it lost, and the claims it saw.
type fakeOwnership struct {
	lost   map[string]bool
	claims []map[string]int64
}

func (f *fakeOwnership) Owns(key string) (int64, bool) { return 7, !f.lost[key] }

func (f *fakeOwnership) Fence(_ persistence.Tx, claims map[string]int64) (map[string]bool, error) {
	f.claims = append(f.claims, claims)
	out := map[string]bool{}
	for k := range claims {
		if f.lost[k] {
			out[k] = true
		}
	}
	return out, nil
}

// TestCommitFencesOnlyTheLostWrite: a batch holding a write of a session whose lease this node
// lost commits the others in the same transaction; the lost one is answered ErrFenced and
// nothing of it is kept. Writes without an owner (inbound) are not fenced.
func TestCommitFencesOnlyTheLostWrite(t *testing.T) {
	store := memory.New()
	own := &fakeOwnership{lost: map[string]bool{"lost": true}}
	results := map[string]error{}
	write := func(name, owner string) *storeWrite {
		return &storeWrite{Owner: owner, Epoch: 7,
			Apply: func(tx persistence.Tx) error {
				_, err := tx.AppendOutbox(name, messages.Outbound{Text: name})
				return err
			},
			Done: func(err error) { results[name] = err }}
	}
	batch := []*storeWrite{write("kept", "kept"), write("lost", "lost"), write("inbound", "")}
	commit(store, own, batch, zerolog.Nop())
	if !errors.Is(results["lost"], ErrFenced) || results["kept"] != nil || results["inbound"] != nil {
		t.Errorf("answers %v; want ErrFenced for the lost session only", results)
	}
	if len(own.claims) != 1 || len(own.claims[0]) != 2 || own.claims[0]["kept"] != 7 {
		t.Errorf("claims %v; want one fence of both owners, in one transaction", own.claims)
	}
	_ = store.View(func(r persistence.Reader) error {
		for name, want := range map[string]int{"kept": 1, "lost": 0, "inbound": 1} {
			if out, _ := r.Outbox(name); len(out) != want {
				t.Errorf("%s: %d outbox rows; want %d", name, len(out), want)
			}
		}
		return nil
	})

	// A single node (no Ownership) applies everything, as before.
	results = map[string]error{}
	commit(store, nil, []*storeWrite{write("lost", "lost")}, zerolog.Nop())
	if results["lost"] != nil {
		t.Errorf("without a cluster: %v", results["lost"])
	}
}
