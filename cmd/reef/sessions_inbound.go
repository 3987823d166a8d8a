package main

import (
	"cmp"
	"encoding/json"
	"strings"
)

// inboundParts is a stored user entry taken apart. reef stores what the model saw: the
// sender's metadata and any quoted message, each wrapped as an untrusted block, before what the
// person wrote (agent.FormatInbound). A sender cannot forge a block: markers in their text are
// neutralised before it is stored.
type inboundParts struct {
	sender string // display name, else id; "" if unknown
	quoted string // the message replied to
	text   string // what the person wrote
}

func splitInbound(content string) inboundParts {
	var p inboundParts
	rest := content
	if body, after, ok := cutBlock(rest, "Message metadata:\n"); ok {
		var meta struct {
			SenderID   string `json:"sender_id"`
			SenderName string `json:"sender_name"`
		}
		if json.Unmarshal([]byte(body), &meta) == nil {
			p.sender = cmp.Or(meta.SenderName, meta.SenderID)
		}
		rest = after
	}
	if body, after, ok := cutBlock(rest, "Replying to this earlier message:\n"); ok {
		p.quoted, rest = body, after
	}
	p.text = rest
	return p
}

// cutBlock cuts an untrusted block introduced by label from the start of s:
//
//	label<<<UNTRUSTED id=ID source=SOURCE>>>
//	body
//	<<<END_UNTRUSTED id=ID>>>
//
// followed by a blank line, and returns the body and what follows.
func cutBlock(s, label string) (body, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, label+"<<<UNTRUSTED id=")
	if !ok {
		return "", "", false
	}
	id, s, ok := strings.Cut(s, " ")
	if !ok {
		return "", "", false
	}
	if _, s, ok = strings.Cut(s, ">>>\n"); !ok {
		return "", "", false
	}
	if body, rest, ok = strings.Cut(s, "\n<<<END_UNTRUSTED id="+id+">>>"); !ok {
		return "", "", false
	}
	return body, strings.TrimPrefix(rest, "\n\n"), true
}
