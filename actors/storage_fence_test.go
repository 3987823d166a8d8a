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

// epochOwnership holds each session's lease at one epoch: a claim of another is lost.
type epochOwnership map[string]int64

func (o epochOwnership) Owns(key string) (int64, bool) { e, ok := o[key]; return e, ok }

func (o epochOwnership) Fence(_ persistence.Tx, claims map[string]int64) (map[string]bool, error) {
	out := map[string]bool{}
	for k, e := range claims {
		if cur, ok := o[k]; !ok || e != 0 && e != cur {
			out[k] = true
		}
	}
	return out, nil
}

// TestCommitFencesAStaleEpochBesideTheCurrent: one batch holds a write of a session under the
// epoch it had before a storage outage (held meanwhile) and one of the Session the node
// started under the lease it took again. The stale one is answered ErrFenced, the current
// one commits: the fence is the session's newest epoch, not the first write's.
func TestCommitFencesAStaleEpochBesideTheCurrent(t *testing.T) {
	store := memory.New()
	results := map[string]error{}
	write := func(name string, epoch int64) *storeWrite {
		return &storeWrite{Owner: "s", Epoch: epoch,
			Apply: func(tx persistence.Tx) error {
				_, err := tx.AppendOutbox("s", messages.Outbound{Text: name})
				return err
			},
			Done: func(err error) { results[name] = err }}
	}
	commit(store, epochOwnership{"s": 4}, []*storeWrite{write("stale", 3), write("current", 4), write("unowned", -1)}, zerolog.Nop())
	if !errors.Is(results["stale"], ErrFenced) || !errors.Is(results["unowned"], ErrFenced) || results["current"] != nil {
		t.Errorf("answers %v; want ErrFenced for epochs 3 and -1, success for the current 4", results)
	}
	_ = store.View(func(r persistence.Reader) error {
		out, _ := r.Outbox("s")
		if len(out) != 1 || out[0].Text != "current" {
			t.Errorf("outbox %v; want the current epoch's write only", out)
		}
		return nil
	})
}
