package metrics

import (
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
)

// Watch counts bus's run events as they are published: runs by outcome, tool calls by tool
// and outcome, sub-agents running; and reports the events the bus dropped for watchers that
// fell behind. It observes the bus (events.Bus.Observe) rather than subscribing, so it
// needs no buffer (a subscription's 4,096 events were 1 MB of an idle gateway) and no
// goroutine, and it misses nothing.
func (m *Metrics) Watch(bus *events.Bus) {
	bus.Observe(m.count)
	m.dropped.Store(bus.Dropped)
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
	}
}
