package metrics

import (
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
)

// FollowBuffer is the subscription buffer Follow's caller should give: the bus drops what a
// subscriber has no room for (counted in reef_events_lost_total).
const FollowBuffer = 4096

// Follow counts the run events of sub until its channel closes (the subscription's or the
// bus's Close): runs by outcome, tool calls by tool and outcome, sub-agents running. The
// caller runs it in a goroutine of its own:
//
//	sub := bus.Subscribe("", metrics.FollowBuffer)
//	go m.Follow(sub) // ends when the bus closes
func (m *Metrics) Follow(sub *events.Subscription) {
	for ev := range sub.Events() {
		m.count(ev)
	}
}

func (m *Metrics) count(ev messages.RunEvent) {
	switch ev.Kind {
	case messages.RunEnd:
		m.runs.add(1, ev.Status)
	case messages.RunToolEnd:
		outcome := "ok"
		if ev.OK != nil && !*ev.OK {
			outcome = "error"
		}
		m.toolCalls.add(1, ev.Name, outcome)
	case messages.SubagentStart:
		m.subagents.Add(1)
	case messages.SubagentEnd:
		m.subagents.Add(-1)
	case messages.EventsLost:
		m.eventsLost.Add(ev.Lost)
	}
}
