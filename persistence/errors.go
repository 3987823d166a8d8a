package persistence

import "errors"

// ErrClosed is returned (wrapped) by a Store's Update and View after Close, and by a Tx or
// Reader used after the Update or View that handed it out has returned.
var ErrClosed = errors.New("store is closed")
