package agent

import "strings"

// InboundText returns what the person wrote from the content of a stored user message, without
// the wrapped parts FormatInbound put before it (the message metadata and the quoted reply):
// memory search indexes a conversation by what was said, not by its envelope. Content that
// does not start with such a part is returned as it is.
func InboundText(content string) string {
	for {
		rest, ok := cutWrapped(content, "Message metadata:\n")
		if !ok {
			rest, ok = cutWrapped(content, "Replying to this earlier message:\n")
		}
		if !ok {
			return content
		}
		content = rest
	}
}

// cutWrapped removes head and the untrusted block after it from the start of s.
func cutWrapped(s, head string) (string, bool) {
	rest, ok := strings.CutPrefix(s, head)
	if !ok || !strings.HasPrefix(rest, markerOpen+" id=") {
		return s, false
	}
	id, _, ok := strings.Cut(strings.TrimPrefix(rest, markerOpen+" id="), " ")
	if !ok {
		return s, false
	}
	end := markerClose + " id=" + id + ">>>"
	i := strings.Index(rest, end)
	if i < 0 {
		return s, false
	}
	return strings.TrimLeft(rest[i+len(end):], "\n"), true
}
