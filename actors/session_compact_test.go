package actors

import (
	"testing"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
)

func TestContextTokens(t *testing.T) {
	deps := &Deps{}
	s := &Session{key: "agent:main:fake:direct:1", deps: deps, agent: &Agent{ID: "main", Workspace: t.TempDir()}, log: deps.Log}
	empty := s.contextTokens()
	if empty < 200 {
		t.Fatalf("contextTokens of an empty session = %d, want at least the system prompt", empty)
	}
	s.history = []messages.ChatMessage{{Role: messages.RoleUser, Content: "hello there"}, {Role: messages.RoleAssistant, Content: "hi"}}
	if got, want := s.contextTokens(), empty+agent.EstimateMessages(s.history); got != want {
		t.Errorf("contextTokens = %d, want %d (prompt + history)", got, want)
	}
	s.cmp.fixed = 1000 // a run reported its prompt size
	if got, want := s.contextTokens(), 1000+agent.EstimateMessages(s.history); got != want {
		t.Errorf("contextTokens after a run = %d, want %d", got, want)
	}
}
