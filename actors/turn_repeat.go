package actors

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"strconv"

	"github.com/reefgw/reef/messages"
)

// loopError ends a run that kept making the same call and getting the same result. It is a
// tool limit, and its text is what the user reads after "I stopped: ".
type loopError struct {
	tool  string
	times int
}

func (e *loopError) Error() string {
	return fmt.Sprintf("I was calling %s with the same arguments and getting the same result over and over (%d times)", e.tool, e.times)
}

func (e *loopError) Unwrap() error { return errToolLimit }

// watchLoop counts the calls of this run that had the same tool, arguments and result as c
// and r. From Limits.LoopWarnAt on it returns a warning to append to the result, telling the
// model to change course; at Limits.LoopStopAt it ends the run after this step. Calls with
// the same arguments but a changing result (polling a build, paging) are not a loop.
func (t *Turn) watchLoop(c messages.ToolCall, r messages.ChatMessage) string {
	if t.done {
		return "" // the run is over; these are the results of calls it cut short
	}
	sig := loopSignature(c, r)
	t.repeats[sig]++
	n := t.repeats[sig]
	switch {
	case n >= t.limits.LoopStopAt:
		if t.stopErr == nil {
			t.stopErr = &loopError{tool: c.Name, times: n}
		}
	case n >= t.limits.LoopWarnAt:
		return fmt.Sprintf("\n\n[reef] Warning: you are repeating yourself. This is call %d of %s with these same "+
			"arguments in this run, and it returned the same result every time. Calling it again will not "+
			"change anything: change your approach (other arguments, another tool), or answer with what you "+
			"have. At %d identical calls the run is stopped.", n, c.Name, t.limits.LoopStopAt)
	}
	return ""
}

// loopSeed keys the loop signatures; they never leave the process.
var loopSeed = maphash.MakeSeed()

// loopSignature is a 64-bit digest of a call's tool, arguments (JSON compacted) and result,
// so the Turn keeps 8 bytes per distinct call instead of the result itself. Collisions get
// likely only near 2^32 distinct calls; a run makes at most Limits.MaxToolCalls.
func loopSignature(c messages.ToolCall, r messages.ChatMessage) string {
	var h maphash.Hash
	h.SetSeed(loopSeed)
	var n [8]byte
	for _, part := range []string{c.Name, compactJSON(c.Arguments), strconv.FormatBool(r.IsError), r.Content} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.WriteString(part)
	}
	binary.LittleEndian.PutUint64(n[:], h.Sum64())
	return string(n[:])
}
