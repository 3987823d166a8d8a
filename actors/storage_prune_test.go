package actors

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// Storage prunes dedup ids older than DedupRetention when it starts (and hourly), in
// transactions of pruneBatch ids; recent ids stay, so redeliveries are still recognised
// (#24 bug 8: nothing called PruneSeen, and the record grew with every message).
func TestStoragePrunesDedupRecord(t *testing.T) {
	old := pruneBatch
	pruneBatch = 3
	t.Cleanup(func() { pruneBatch = old })
	store, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	var stale, fresh []string
	err = store.Update(func(tx persistence.Tx) error {
		for i := range 10 {
			id := fmt.Sprintf("feishu::oc_1:om_%02d", i)
			at := now.Add(-DedupRetention - time.Hour) // past every redelivery window
			if i%3 == 0 {
				at, fresh = now.Add(-7*time.Hour), append(fresh, id) // Feishu may still redeliver it
			} else {
				stale = append(stale, id)
			}
			if _, err := tx.MarkSeen(id, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	system := actor.NewActorSystemWithConfig(SystemConfig(testutil.Logger(t)))
	pid := system.Root.Spawn(StorageProps(store, testutil.Logger(t)))
	defer func() { system.Root.StopFuture(pid).Wait() }()
	seen := func(id string) bool {
		var ok bool
		store.View(func(r persistence.Reader) (err error) { ok, err = r.Seen(id); return err })
		return ok
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := 0
		for _, id := range stale {
			if seen(id) {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d stale dedup ids still recorded", left, len(stale))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range fresh {
		if !seen(id) {
			t.Errorf("dedup id %s (7 h old) was pruned; the platform may still redeliver it", id)
		}
	}
}
