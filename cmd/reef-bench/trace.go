//go:build linux

package main

import (
	"fmt"
	"io"
	"time"
)

// benchSend is a message the bot sent or edited, as the fake Bot API took it.
type benchSend struct {
	at   time.Time
	id   int
	edit bool
	text string
}

// printTrace prints, for the chat of the slowest reply among msgs, each message injected and
// each sendMessage and editMessageText the fake took, timed from the chat's first message:
// where a reply waited, and behind what.
func (r *benchRig) printTrace(w io.Writer, msgs []*benchMsg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var slow *benchMsg
	for _, m := range msgs {
		if m.replies > 0 && (slow == nil || m.replied.Sub(m.injected) > slow.replied.Sub(slow.injected)) {
			slow = m
		}
	}
	if slow == nil {
		return
	}
	var start time.Time
	for _, m := range msgs {
		if m.chat == slow.chat && (start.IsZero() || m.injected.Before(start)) {
			start = m.injected
		}
	}
	fmt.Fprintf(w, "trace of chat %d (its slowest reply took %v):\n", slow.chat, slow.replied.Sub(slow.injected).Round(time.Millisecond))
	for _, s := range r.sends[slow.chat] {
		method := "sendMessage    "
		if s.edit {
			method = "editMessageText"
		}
		text := s.text
		if len(text) > 60 {
			text = text[:60] + "…"
		}
		fmt.Fprintf(w, "  +%6.1f ms  %s #%d %q\n", float64(s.at.Sub(start).Microseconds())/1000, method, s.id, text)
	}
}
