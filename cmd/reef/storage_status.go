package main

import (
	"fmt"
	"io"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/termtext"
)

// storageLine says a storage outage in words, for reef status and /readyz: "storage DOWN
// since 10:04:05 (20s ago), 12 writes waiting: the database refused the connection".
func storageLine(h actors.StorageHealth) string {
	s := fmt.Sprintf("storage DOWN since %s (%s ago), %d writes waiting (inbound messages are not acknowledged, replies wait)",
		h.Since.Local().Format(time.DateTime), time.Since(h.Since).Round(time.Second), h.Waiting)
	if h.Reason != "" {
		s += ": " + h.Reason
	}
	return s
}

// printStorage is reef status's line about a storage outage (nothing while the database
// answers).
func printStorage(w io.Writer, h *actors.StorageHealth) {
	if h == nil || h.Up {
		return
	}
	fmt.Fprintln(w, termtext.Line(storageLine(*h)))
}
