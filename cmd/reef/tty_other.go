//go:build !linux

package main

import "errors"

// lineMode is not implemented here: reef chat reads lines as the terminal's own line
// discipline edits them.
func lineMode(int) (restore func(), err error) {
	return nil, errors.New("line editing is implemented on Linux only")
}
