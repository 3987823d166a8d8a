//go:build !linux

package memory

import "errors"

// newWatcher has no file watcher to offer here: syncs fall back to the periodic stat scan.
func newWatcher(string) (watcher, error) {
	return nil, errors.New("no file watcher on this system")
}
