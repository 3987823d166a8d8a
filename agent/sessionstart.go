package agent

import (
	"fmt"
	"os"
	"path"
	"strings"
	"time"
)

// DailyNote is the workspace-relative name of the daily memory file for day.
func DailyNote(day time.Time) string { return path.Join(DirMemory, day.Format("2006-01-02")+".md") }

// SessionStartNote is the system event that opens the first run after /new or /reset: it
// tells the agent a new session began, gives it today's and yesterday's daily notes once
// (each capped like an injected file) and asks it to greet the user in its persona. The daily
// notes are the owner's: only a private run (one with the owner's standing) gets them.
func SessionStartNote(dir string, now time.Time, private bool) string {
	var b strings.Builder
	b.WriteString("A new session was started by the user (/new or /reset). Earlier messages are no longer in your context; " +
		"your workspace files and memory are. Greet the user briefly in your persona (SOUL.md, IDENTITY.md), " +
		"then respond to their message.")
	if !private {
		return b.String()
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return b.String()
	}
	defer root.Close()
	for _, day := range []time.Time{now.AddDate(0, 0, -1), now} {
		name := DailyNote(day)
		text, size, partial, err := readRegular(root, name, 4*MaxFileChars)
		if err != nil || strings.TrimSpace(text) == "" {
			continue
		}
		f := capFile(name, text, size, MaxFileChars, partial)
		fmt.Fprintf(&b, "\n\n## %s\n%s", f.Name, f.Content)
	}
	return b.String()
}
