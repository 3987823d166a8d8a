package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence/memory"
)

// releasingStore is a store that counts ReleaseMapped calls.
type releasingStore struct {
	*memory.Store
	released chan struct{}
}

func (s releasingStore) ReleaseMapped() error {
	select {
	case s.released <- struct{}{}:
	default:
	}
	return nil
}

// TestStorageReleasesMappedPages: Storage gives back the mapped database pages periodically.
func TestStorageReleasesMappedPages(t *testing.T) {
	defer func(d time.Duration) { releaseEvery = d }(releaseEvery)
	releaseEvery = 10 * time.Millisecond
	store := releasingStore{Store: memory.New(), released: make(chan struct{}, 1)}
	system := actor.NewActorSystem()
	pid := system.Root.Spawn(StorageProps(store, zerolog.Nop()))
	for range 2 {
		select {
		case <-store.released:
		case <-time.After(5 * time.Second):
			t.Fatal("Storage did not release the mapped pages")
		}
	}
	if err := system.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
}
