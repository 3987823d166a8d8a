package bolt

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// A transcript page the damage cut off from its session (its session's top page is gone, or
// a branch above it) still names its chat: each user message opens with its metadata
// (agent.FormatInbound). Transcript entries never change once written, so such a page,
// current or an old copy, holds true entries of that chat's session. findLoose gives them
// back to the one session of that chat, filling only the seqs it lacks, and refusing a page
// that disagrees with an entry the session has (a session deleted and started again reuses
// its seqs).

// loosePage is a transcript leaf page outside the tree and the chat its user messages name.
type loosePage struct {
	chat    string
	entries map[string][]byte // seq key → entry
}

// findLoose lists the transcript pages outside taken whose user messages all name one chat.
func findLoose(pf *pageFile, taken map[uint64]bool) []loosePage {
	var out []loosePage
	for _, buf := range leavesOutside(pf, taken) {
		vals, ok := wholeLeafValues(buf)
		if !ok {
			continue
		}
		if chat := transcriptChat(vals); chat != "" {
			for k, v := range vals {
				vals[k] = bytes.Clone(v)
			}
			out = append(out, loosePage{chat: chat, entries: vals})
		}
	}
	return out
}

// transcriptChat returns the one chat the transcript entries vals name, or "" when they are
// not all transcript entries or name no chat or several.
func transcriptChat(vals map[string][]byte) string {
	chat := ""
	for k, v := range vals {
		var m messages.ChatMessage
		if len(k) != 8 || btoi([]byte(k)) == 0 || json.Unmarshal(v, &m) != nil || m.Role == "" {
			return ""
		}
		switch c := messageChat(m); {
		case c == "":
		case chat == "":
			chat = c
		case c != chat:
			return ""
		}
	}
	return chat
}

// fillLoose gives the entries of loose pages to their chat's session among sessions, or to a
// session known only by key (lost: its own pages are gone), which it then rebuilds with an
// info record naming its key and chat. A chat must belong to exactly one such session (a
// key ending in ":<chat>"). It returns, per session key, how many entries it added.
func fillLoose(pages []loosePage, sessions *bucket, lost []string) map[string]int {
	byChat := map[string][]string{}
	for _, key := range append(sessionKeysOf(sessions), lost...) {
		if i := strings.LastIndexByte(key, ':'); i > 0 {
			byChat[key[i+1:]] = append(byChat[key[i+1:]], key)
		}
	}
	added := map[string]int{}
	for _, p := range pages {
		keys := byChat[p.chat]
		if len(keys) != 1 {
			continue
		}
		key := keys[0]
		s := sessions.kids[key]
		if s != nil {
			var info persistence.SessionInfo
			if json.Unmarshal(s.vals["info"], &info) == nil && info.ChatID != p.chat {
				continue
			}
		}
		msgs := s.at([][]byte{bucketMsgs})
		agrees := true
		for k, v := range p.entries {
			if msgs != nil && (msgs.vals[k] != nil && !bytes.Equal(msgs.vals[k], v) || msgs.seq > 0 && btoi([]byte(k)) > msgs.seq) {
				agrees = false
			}
		}
		if !agrees {
			continue
		}
		if s == nil {
			s = newBucket(0)
			sessions.kids[key] = s
			info, _ := json.Marshal(persistence.SessionInfo{Key: key, AgentID: agentOfKey(key), ChatID: p.chat})
			s.vals["info"] = info
		}
		msgs = s.kid(string(bucketMsgs), true)
		for k, v := range p.entries {
			if msgs.vals[k] == nil {
				msgs.vals[k] = v
				msgs.seq = max(msgs.seq, btoi([]byte(k)))
				added[key]++
			}
		}
	}
	return added
}

// sessionKeysOf lists the keys of the sessions bucket's sessions.
func sessionKeysOf(sessions *bucket) []string {
	out := make([]string, 0, len(sessions.kids))
	for key := range sessions.kids {
		out = append(out, key)
	}
	return out
}

// agentOfKey returns the agent id of a session key "agent:<id>:...", or "".
func agentOfKey(key string) string {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) < 3 || parts[0] != "agent" {
		return ""
	}
	return parts[1]
}
