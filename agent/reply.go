package agent

import (
	"strings"
	"unicode"
)

// SilentToken is the whole reply an agent gives when nothing should be sent.
const SilentToken = "NO_REPLY"

// IsSilent reports whether a reply means "send nothing": the text is SilentToken, possibly
// surrounded by whitespace, punctuation or Markdown marks ("NO_REPLY.", "**NO_REPLY**",
// "`NO_REPLY`"), and nothing else. "NO_REPLY, but..." or "no reply needed" are real replies.
func IsSilent(text string) bool {
	return strings.TrimFunc(text, isSilentTrim) == SilentToken
}

func isSilentTrim(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || r == '`' || r == '~' || r == '\u200b' || r == '\ufeff'
}

// HeartbeatEmpty reports whether HEARTBEAT.md content holds no task, so a heartbeat can be
// skipped without calling the model. Blank lines, Markdown headings, HTML comments and empty
// list items ("-", "- [ ]") are not tasks.
func HeartbeatEmpty(content string) bool {
	inComment := false
	for line := range strings.Lines(content) {
		line = strings.TrimSpace(line)
		for line != "" {
			if inComment {
				_, after, ok := strings.Cut(line, "-->")
				if !ok {
					line = ""
					break
				}
				inComment, line = false, strings.TrimSpace(after)
				continue
			}
			before, after, ok := strings.Cut(line, "<!--")
			if ok {
				if !emptyTaskLine(before) {
					return false
				}
				inComment, line = true, after
				continue
			}
			if !emptyTaskLine(line) {
				return false
			}
			line = ""
		}
	}
	return true
}

// emptyTaskLine reports whether a line (outside comments) carries no task.
func emptyTaskLine(line string) bool {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return true
	case strings.HasPrefix(line, "#"):
		return true
	}
	line = strings.TrimLeft(line, "-*+ ")
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(line, "[ ]"), "[x]"))
	return line == ""
}
