package agent

import (
	"testing"
	"time"
)

func TestToolLabel(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"ls", `{"path":"."}`, "ls ."},
		{"exec", `{"command":"ls   -la\n/tmp"}`, "exec ls -la /tmp"},
		{"plan", `{"steps":[]}`, "plan"},
		{"read", `not json`, "read"},
	} {
		if got := ToolLabel(tc.name, tc.args); got != tc.want {
			t.Errorf("ToolLabel(%s, %s) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}

// TestIsInternalPrompt: both of reef's new-session instructions are recognised, a person's
// words are not.
func TestIsInternalPrompt(t *testing.T) {
	if !IsInternalPrompt(SessionStartNote(t.TempDir(), time.Now(), true)) || !IsInternalPrompt(SessionStartNote(t.TempDir(), time.Now(), false)) || !IsInternalPrompt(NewSessionPrompt+" Greet them") {
		t.Error("a new-session instruction is not recognised")
	}
	if IsInternalPrompt("hello, a new session please") {
		t.Error("a person's words taken for an internal prompt")
	}
}
