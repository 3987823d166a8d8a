package agent

import (
	"encoding/json"
	"strings"
)

// ToolLabel is a short line describing a tool call, for progress displays: the tool's name
// and its main argument ("exec ls -la", "read notes.txt"). Live progress and a reloaded
// WebChat show the same line.
func ToolLabel(name, arguments string) string {
	var args map[string]any
	_ = json.Unmarshal([]byte(arguments), &args)
	for _, k := range []string{"command", "path", "file_path", "url", "query"} {
		if s, ok := args[k].(string); ok && s != "" {
			s = strings.Join(strings.Fields(s), " ")
			if len(s) > 60 {
				s = s[:57] + "..."
			}
			return name + " " + s
		}
	}
	return name
}

// NewSessionPrompt begins the request for a greeting after /new or /reset (the Session's).
const NewSessionPrompt = "[New session]"

// sessionStartLead begins SessionStartNote.
const sessionStartLead = "A new session was started by the user (/new or /reset)."

// IsInternalPrompt reports whether a system event's text is one of reef's instructions to
// the model about a new session, which a chat's history never shows.
func IsInternalPrompt(text string) bool {
	return strings.Contains(text, NewSessionPrompt) || strings.Contains(text, sessionStartLead)
}
