package actors

import (
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

func TestRunPriority(t *testing.T) {
	person := messages.Inbound{Channel: "telegram", SenderID: "42", Text: "hi"}
	cron := messages.Inbound{System: true, Source: "cron:j1"}
	beat := messages.Inbound{System: true, Source: "heartbeat"}
	tests := []struct {
		name      string
		key       string
		answering []messages.Inbound
		want      providers.Priority
	}{
		{"a person", "agent:main:telegram:direct:42", []messages.Inbound{person}, providers.PriorityPeople},
		{"a heartbeat", "agent:main:telegram:direct:42", []messages.Inbound{beat}, providers.PriorityBackground},
		{"an isolated cron job", "agent:main:cron:j1", []messages.Inbound{cron}, providers.PriorityBackground},
		{"a cron event answered with a person's message", "agent:main:telegram:direct:42", []messages.Inbound{cron, person}, providers.PriorityPeople},
		{"a sub-agent", "agent:main:subagent:0b6f", []messages.Inbound{person}, providers.PriorityBackground},
		{"a resumed run with nothing in hand", "agent:main:telegram:direct:42", nil, providers.PriorityPeople},
	}
	for _, tt := range tests {
		if got := runPriority(tt.key, tt.answering); got != tt.want {
			t.Errorf("%s: runPriority = %v, want %v", tt.name, got, tt.want)
		}
	}
}
