package sessions

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

// TestSessionToolsAreOwners: the session tools reach other conversations and start runs, so
// each is an owner tool and in group:sessions; guests get none of them by default.
func TestSessionToolsAreOwners(t *testing.T) {
	for _, tool := range Tools() {
		name := tool.Spec().Name
		if !tools.IsOwnerTool(name) {
			t.Errorf("%s is not in tools.OwnerTools", name)
		}
		if !slices.Contains(tools.Groups["group:sessions"], name) {
			t.Errorf("%s is not in group:sessions", name)
		}
		if slices.Contains(tools.GuestTools, name) {
			t.Errorf("%s is given to guests by default", name)
		}
	}
}

// TestArgumentsCheckedFirst: bad arguments are refused before the runtime is reached.
func TestArgumentsCheckedFirst(t *testing.T) {
	byName := map[string]tools.Tool{}
	for _, tool := range Tools() {
		byName[tool.Spec().Name] = tool
	}
	for name, args := range map[string]string{
		"sessions_spawn":   `{"label":"x"}`,
		"sessions_send":    `{"message":"hi"}`,
		"subagents":        `{"action":"kill"}`,
		"sessions_history": `{}`,
		"sessions_yield":   `{"extra":1}`,
	} {
		_, err := byName[name].Run(context.Background(), tools.Call{Args: []byte(args), Env: tools.Env{SessionKey: "k"}})
		if err == nil || strings.Contains(err.Error(), "not available here") {
			t.Errorf("%s %s: %v, want an argument error", name, args, err)
		}
	}
}
