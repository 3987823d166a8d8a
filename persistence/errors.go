package persistence

import "errors"

// ErrClosed is returned (wrapped) by a Store's Update and View after Close, and by a Tx or
// Reader used after the Update or View that handed it out has returned.
var ErrClosed = errors.New("store is closed")

// ErrCorrupt is returned (wrapped, with what is wrong) by Open functions when the database
// file is damaged: truncated, or with pages that do not hold what they should. The file is
// left as it was; `reef doctor --repair` copies what can still be read into a new one.
var ErrCorrupt = errors.New("the database file is damaged")
