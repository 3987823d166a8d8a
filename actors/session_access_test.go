package actors

import (
	"slices"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/fs"
)

// TestSystemEventRights: a System event's tools come from its Standing, never from being
// reef's own: without a standing it gets a guest's tools, with the owner's the agent's policy,
// with a guest's the guest tools, and one raised by a run at most that run's tools. Only the
// owner's standing (or a run's, for approvals as before) counts as the owner.
func TestSystemEventRights(t *testing.T) {
	reg, err := tools.NewRegistry(append(fs.Tools(fs.Config{}), exec.New(exec.Config{}))...)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := tools.NewPolicy(nil, nil, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{key: "agent:main:telegram:direct:9", agent: &Agent{ID: "main", Tools: reg, Policy: policy},
		deps: &Deps{Access: map[string]*access.Rules{"telegram": {DMPolicy: "pairing", AllowFrom: []string{"owner"}}}}}
	event := func(st *messages.Standing) messages.Inbound {
		return messages.Inbound{System: true, Source: "heartbeat", Channel: "telegram", ChatID: "9", SenderID: "9",
			ChatType: messages.ChatDirect, Standing: st}
	}
	guest := []string{"ls", "read"} // tools.GuestTools this registry has
	tests := []struct {
		name  string
		in    messages.Inbound
		want  []string
		owner bool
	}{
		{"no standing", event(nil), guest, false},
		{"a guest's", event(messages.GuestStanding()), guest, false},
		{"the owner's", event(messages.OwnerStanding()), policy.Allowed(), true},
		{"raised by a run", event(&messages.Standing{Tools: []string{"read", "exec"}}), []string{"exec", "read"}, true},
		{"raised by a run without tools", event(&messages.Standing{}), []string{}, true},
		{"on the terminal, no standing", messages.Inbound{System: true, Channel: "terminal", ChatType: messages.ChatDirect}, guest, false},
	}
	for _, tt := range tests {
		if got := s.toolPolicy(tt.in).Allowed(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: tools %v, want %v", tt.name, got, tt.want)
		}
		if got := s.isOwner(tt.in); got != tt.owner {
			t.Errorf("%s: isOwner %v, want %v", tt.name, got, tt.owner)
		}
	}
	// The owner's own message still gets everything, a paired guest's the guest tools.
	if got := s.toolPolicy(messages.Inbound{Channel: "telegram", SenderID: "owner", ChatType: messages.ChatDirect}).Allowed(); !slices.Equal(got, policy.Allowed()) {
		t.Errorf("the owner's message: tools %v", got)
	}
	// A session has the owner's standing only once the owner used it.
	if st := sessionStanding(persistence.SessionInfo{}); st.Caller != messages.CallerGuest {
		t.Errorf("a session the owner never used: standing %+v, want a guest's", st)
	}
	if st := sessionStanding(persistence.SessionInfo{OwnerSeen: time.Unix(1, 0)}); st.Caller != messages.CallerOwner {
		t.Errorf("a session the owner used: standing %+v, want the owner's", st)
	}
}
