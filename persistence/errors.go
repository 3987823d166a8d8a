package persistence

import (
	"errors"
	"time"
)

// ErrClosed is returned (wrapped) by a Store's Update and View after Close, and by a Tx or
// Reader used after the Update or View that handed it out has returned.
var ErrClosed = errors.New("store is closed")

// ErrCorrupt is returned (wrapped, with what is wrong) by Open functions when the database
// file is damaged: truncated, or with pages that do not hold what they should. The file is
// left as it was; `reef doctor --repair` copies what can still be read into a new one.
var ErrCorrupt = errors.New("the database file is damaged")

// ErrUnavailable is returned (wrapped, with the cause) by a Store's Update and View when the
// database could not be reached or the connection to it broke (a database server that is
// down, restarting or failing over, a network that fails). Nothing of the failed Update was
// kept, so the same transaction may be run again once the database answers: the Storage
// actor holds such writes and retries them (docs/operations.md). bbolt never returns it.
var ErrUnavailable = errors.New("the database is unreachable")

// Reachability is implemented by stores whose database can be out of reach (PostgreSQL).
// Unreachable reports since when the database has not answered, and why; a zero time while
// it answers. The Storage actor reads it to show an outage it cannot see from its commits
// alone (a commit waiting to learn whether the database took it).
type Reachability interface {
	Unreachable() (since time.Time, cause error)
}
