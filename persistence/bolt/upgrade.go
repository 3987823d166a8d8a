package bolt

import (
	"fmt"
	"io"
	"strconv"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/persistence"
)

// keyNeeds is meta/needs: the oldest reef release that reads the file (persistence.FormatRelease).
var keyNeeds = []byte("needs")

// upgrade is one step of the store format, from format from to from+1, run inside the
// transaction that upgrades the file; stamp writes the new format after it.
type upgrade struct {
	from int
	what string // what the step changes, for the log and the docs
	run  func(*bbolt.Tx) error
}

// upgrades are the steps from each older format to the next, in order. A new format adds a
// step here (and its release in persistence.FormatRelease); TestUpgradesCoverEveryFormat
// checks that the steps join format 0 to persistence.Format.
var upgrades = []upgrade{
	{0, "records the format (reef's buckets without meta/schema)", func(*bbolt.Tx) error { return nil }},
	{1, "records the oldest reef release that reads the file (meta/needs)", func(*bbolt.Tx) error { return nil }},
}

// BeforeUpgrade is called by Open, with the file locked and before anything is written, when
// the file is in an older format than persistence.Format: from is its format. backup writes
// a consistent copy of the file, as it is, to w. An error stops Open, which then changes
// nothing.
type BeforeUpgrade func(from int, backup func(w io.Writer) error) error

// readFormat returns the file's format: persistence.Format for a new file (no sessions
// bucket), 0 for reef's buckets without a format record.
func readFormat(btx *bbolt.Tx) (int, error) {
	var v []byte
	if meta := btx.Bucket(bucketMeta); meta != nil {
		v = meta.Get(keySchema)
	}
	if v == nil {
		if btx.Bucket(bucketSessions) == nil {
			return persistence.Format, nil
		}
		return 0, nil
	}
	return persistence.ParseFormat(string(v))
}

// newerError is the error for a file in a format newer than this reef's.
func newerError(btx *bbolt.Tx, path string, format int) error {
	var needs string
	if meta := btx.Bucket(bucketMeta); meta != nil {
		needs = string(meta.Get(keyNeeds))
	}
	return &persistence.FormatError{Store: "the database " + path, Format: format, Needs: needs}
}

// upgradeFile runs the steps from format from to persistence.Format in btx, stamping each
// format as it is reached.
func upgradeFile(btx *bbolt.Tx, from int) error {
	meta, err := btx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	for _, u := range upgrades {
		if u.from < from {
			continue
		}
		if err := u.run(btx); err != nil {
			return fmt.Errorf("upgrade from store format %d: %w", u.from, err)
		}
		if err := stamp(meta, u.from+1); err != nil {
			return err
		}
	}
	return nil
}

// stamp records format n, and the release it needs when it names one.
func stamp(meta *bbolt.Bucket, n int) error {
	if err := meta.Put(keySchema, []byte(strconv.Itoa(n))); err != nil {
		return err
	}
	if r, ok := persistence.FormatRelease[n]; ok {
		return meta.Put(keyNeeds, []byte(r))
	}
	return nil
}
