package persistence

import (
	"fmt"
	"strconv"
)

// Format is the store format this reef reads and writes. Both stores record it (bolt under
// meta/schema, PostgreSQL in reef_meta's 'schema' row) and keep the same number for the same
// records, so that a store moved with `reef migrate --to postgres` keeps its format:
//
//	0  reef's buckets without a format record (never written by a release; read as 1)
//	1  the layout described in bolt's and postgres' package docs (up to commit ab5d3d3)
//	2  format 1 plus a "needs" record: the oldest reef release that reads the store, which
//	   an older reef (from this one on) names when it refuses the store
//
// A newer reef upgrades an older store at open, in one transaction, after a backup (bolt's
// Options.BeforeUpgrade); each backend keeps a table of steps from format N to N+1. An older
// reef refuses a newer store with a *FormatError naming the release to run.
const Format = 2

// FormatRelease names, for each format from 2 on, the first reef release that reads it: what
// a store of that format records as the reef it needs. A new format adds its line here
// with the release it ships in.
var FormatRelease = map[int]string{
	2: "v0.1.0",
}

// ReleasesURL is where reef's releases are listed.
const ReleasesURL = "https://github.com/reefgw/reef/releases"

// FormatError is an Open function's error for a store written by a newer reef.
type FormatError struct {
	Store  string // the file or database, as the user knows it
	Format int    // the store's format
	Needs  string // the release the store says it needs; "" when it does not say
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s is in store format %d, which needs %s; this reef reads store formats up to %d",
		e.Store, e.Format, e.needs(), Format)
}

func (e *FormatError) needs() string {
	for f, r := range FormatRelease { // a record a newer reef forgot to update says nothing
		if f <= Format && r == e.Needs {
			return "a newer reef"
		}
	}
	if e.Needs == "" {
		return "a newer reef"
	}
	return "reef " + e.Needs + " or later"
}

// Help says what to do, in lines a user can follow.
func (e *FormatError) Help() string {
	return fmt.Sprintf("A newer reef upgraded this database. Either run %s again\n"+
		"(`reef version` prints the version you run; releases are at %s),\n"+
		"or stay on this reef: stop reef and put back the backup the upgrade took first\n"+
		"(what was written since is then lost; docs/operations.md, \"Upgrading and rolling back\"):\n"+
		"  reef restore $REEF_HOME/backups/reef-before-format-%d-<time>.db.gz",
		e.needs(), ReleasesURL, e.Format)
}

// ParseFormat reads a recorded format: a whole number from 1 up.
func ParseFormat(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("unreadable store format %q", v)
	}
	return n, nil
}
