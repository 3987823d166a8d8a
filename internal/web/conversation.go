package web

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// item is one block of the conversation view.
type item struct {
	Kind  string // user | assistant | system | tool (a result without its call) | summary | reset
	Text  string
	Time  time.Time
	Calls []call
	Error bool
}

// call is a tool call with its result, shown collapsed.
type call struct {
	ID, Name, Args, Result string
	HasResult, Error       bool
}

// items lays out a conversation: entries in order, each snapshot after the entry it covers
// up to, each tool result under its call.
func items(c Conversation) []item {
	var out []item
	where := map[string][2]int{} // call id → item, call
	snaps := c.Snapshots
	addSnap := func(s persistence.Snapshot) {
		if s.Kind == persistence.SnapshotReset {
			out = append(out, item{Kind: "reset", Time: s.Created})
		} else {
			out = append(out, item{Kind: "summary", Text: s.Summary, Time: s.Created})
		}
	}
	for _, e := range c.Entries {
		for len(snaps) > 0 && snaps[0].Seq < e.Seq {
			addSnap(snaps[0])
			snaps = snaps[1:]
		}
		m := e.ChatMessage
		switch m.Role {
		case messages.RoleTool:
			if at, ok := where[m.ToolCallID]; ok {
				cl := &out[at[0]].Calls[at[1]]
				cl.Result, cl.HasResult, cl.Error = m.Content, true, m.IsError
				continue
			}
			out = append(out, item{Kind: "tool", Text: m.ToolName + ": " + m.Content, Time: m.Time, Error: m.IsError})
		case messages.RoleAssistant:
			it := item{Kind: "assistant", Text: m.Content, Time: m.Time}
			for _, tc := range m.ToolCalls {
				where[tc.ID] = [2]int{len(out), len(it.Calls)}
				it.Calls = append(it.Calls, call{ID: tc.ID, Name: tc.Name, Args: pretty(tc.Arguments)})
			}
			out = append(out, it)
		default:
			out = append(out, item{Kind: string(m.Role), Text: m.Content, Time: m.Time})
		}
	}
	for _, s := range snaps {
		addSnap(s)
	}
	return out
}

// pretty indents JSON arguments; anything else is shown as it is.
func pretty(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}
