package agent

import (
	"regexp"
	"strings"
)

// Reply is a model's answer with OpenClaw's output directives taken out.
//
//   - "[[reply_to_current]]" asks for a native quoted reply to the message being answered;
//   - "[[reply_to:<id>]]" asks for one to the message with that id (as the model saw it in
//     the inbound metadata);
//   - "<final>…</final>": when the answer holds final blocks, only their content is shown;
//   - a line "MEDIA: <workspace path or https URL>" sends that file with the reply;
//   - SilentToken alone (after the above) sends nothing.
//
// Directives inside code fences are text, so an agent can explain them.
type Reply struct {
	Text           string // what the user sees
	ReplyToCurrent bool
	ReplyTo        string   // the message id of [[reply_to:<id>]]; the last one wins
	Silent         bool     // nothing is sent
	Media          []string // the references of MEDIA: lines, in order
}

// mediaRef returns the reference of a "MEDIA: <ref>" line (OpenClaw's directive; the ref may
// be wrapped in backticks or quotes), or "" when line is not one.
func mediaRef(line string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "MEDIA:")
	if !ok {
		return ""
	}
	return strings.Trim(strings.TrimSpace(rest), "`\"'<>")
}

var (
	replyToCurrent = regexp.MustCompile(`\[\[\s*reply_to_current\s*\]\]`)
	replyToID      = regexp.MustCompile(`\[\[\s*reply_to\s*:\s*([^\]\s]+)\s*\]\]`)
	spaces         = regexp.MustCompile(`[ \t]{2,}`)
)

// ParseReply takes the directives out of raw.
func ParseReply(raw string) Reply {
	var r Reply
	text := finalBlocks(raw)
	var out []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fence = !fence
		}
		if !fence {
			if ref := mediaRef(line); ref != "" {
				r.Media = append(r.Media, ref)
				continue
			}
		}
		if fence || !strings.Contains(line, "[[") {
			out = append(out, line)
			continue
		}
		before := line
		if replyToCurrent.MatchString(line) {
			r.ReplyToCurrent = true
			line = replyToCurrent.ReplaceAllString(line, "")
		}
		for _, m := range replyToID.FindAllStringSubmatch(line, -1) {
			r.ReplyTo = m[1]
		}
		line = replyToID.ReplaceAllString(line, "")
		if line != before {
			line = strings.TrimSpace(spaces.ReplaceAllString(line, " "))
			if line == "" {
				continue // a line that held only directives goes entirely
			}
		}
		out = append(out, line)
	}
	r.Text = strings.TrimSpace(strings.Join(out, "\n"))
	r.Silent = IsSilent(r.Text)
	return r
}

// finalBlocks returns the content of the <final> blocks of text (one still open at the end
// runs to the end), or text itself when it has none.
func finalBlocks(text string) string {
	const open, close = "<final>", "</final>"
	if !strings.Contains(text, open) {
		return text
	}
	var blocks []string
	for {
		_, after, ok := strings.Cut(text, open)
		if !ok {
			break
		}
		body, rest, _ := strings.Cut(after, close)
		blocks = append(blocks, strings.TrimSpace(body))
		text = rest
	}
	return strings.Join(blocks, "\n\n")
}

// ShownText is what the user may see of text a model is still writing (a draft, the words
// before a tool call): the directives of ParseReply taken out, and a directive or tag not
// yet complete at the end held back.
func ShownText(partial string) string {
	if i := strings.LastIndex(partial, "[["); i >= 0 && !strings.Contains(partial[i:], "]]") {
		partial = partial[:i]
	}
	if i := strings.LastIndexByte(partial, '<'); i >= 0 && strings.HasPrefix("</final>", partial[i:]) ||
		i >= 0 && strings.HasPrefix("<final>", partial[i:]) {
		partial = partial[:i]
	}
	r := ParseReply(partial)
	if r.Silent || strings.HasPrefix(SilentToken, strings.TrimSpace(r.Text)) {
		return ""
	}
	return r.Text
}
