package storetest

import (
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
)

// testSnapshotList pins Snapshots: every snapshot of the session, by seq, whatever order
// they were written in, with Kind kept; one per seq; copies; nothing after DeleteSession.
func testSnapshotList(t *testing.T, s persistence.Store) {
	view(t, s, func(r persistence.Reader) error {
		if got, err := r.Snapshots("k"); len(got) != 0 || err != nil {
			t.Errorf("Snapshots(unknown) = %v, %v; want empty, nil", got, err)
		}
		return nil
	})
	var seqs []uint64
	update(t, s, func(tx persistence.Tx) error {
		// A reset before the first entry covers nothing: seq 0.
		must(t, tx.PutSnapshot("k", persistence.Snapshot{Seq: 0, Kind: "reset", Created: base}))
		var err error
		seqs, err = tx.AppendMessages("k", msg("user", "1"), msg("assistant", "2"), msg("user", "3"),
			msg("assistant", "4"), msg("user", "5"))
		must(t, err)
		must(t, tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[3], Summary: "up to 4", Created: base.Add(2 * time.Hour)}))
		must(t, tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[1], Summary: "first", Created: base}))
		_, err = tx.AppendMessages("other", msg("user", "x"))
		must(t, err)
		return tx.PutSnapshot("other", persistence.Snapshot{Seq: 1, Summary: "other"})
	})
	update(t, s, func(tx persistence.Tx) error {
		must(t, tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[2], Kind: "reset", Created: base.Add(time.Hour)}))
		// A second snapshot at the same seq replaces the first.
		return tx.PutSnapshot("k", persistence.Snapshot{Seq: seqs[1], Summary: "up to 2", Created: base})
	})
	want := []persistence.Snapshot{
		{Seq: 0, Kind: "reset", Created: base},
		{Seq: seqs[1], Summary: "up to 2", Created: base},
		{Seq: seqs[2], Kind: "reset", Created: base.Add(time.Hour)},
		{Seq: seqs[3], Summary: "up to 4", Created: base.Add(2 * time.Hour)},
	}
	view(t, s, func(r persistence.Reader) error {
		got, err := r.Snapshots("k")
		must(t, err)
		if d := diff(want, got); d != "" {
			t.Errorf("Snapshots(k) (-want +got):\n%s", d)
		}
		got[0].Summary, got[1].Kind = "changed", "changed"
		again, err := r.Snapshots("k")
		must(t, err)
		if d := diff(want, again); d != "" {
			t.Errorf("mutating what Snapshots returned changed the store (-want +got):\n%s", d)
		}
		latest, ok, err := r.LatestSnapshot("k")
		must(t, err)
		if d := diff(want[3], latest); !ok || d != "" {
			t.Errorf("LatestSnapshot ok=%v (-want +got):\n%s", ok, d)
		}
		return nil
	})
	update(t, s, func(tx persistence.Tx) error { return tx.DeleteSession("k") })
	view(t, s, func(r persistence.Reader) error {
		if got, err := r.Snapshots("k"); len(got) != 0 || err != nil {
			t.Errorf("Snapshots after DeleteSession = %v, %v; want empty, nil", got, err)
		}
		got, err := r.Snapshots("other")
		must(t, err)
		if len(got) != 1 || got[0].Summary != "other" {
			t.Errorf("Snapshots(other) = %+v; want its one snapshot", got)
		}
		return nil
	})
}
