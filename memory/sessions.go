package memory

import (
	"strings"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// SessionPrefix begins the path of a session transcript in the index and in results:
// sessions/<session key>.
const SessionPrefix = "sessions/"

// maxTurnBytes caps the text of one turn that is indexed: a pasted log is not a memory.
const maxTurnBytes = 32 << 10

// IsSessionPath reports whether p names a session transcript in the index.
func IsSessionPath(p string) bool { return strings.HasPrefix(p, SessionPrefix) }

// turn is one exchange of a transcript: what the person said and what the agent answered,
// from a message that starts the exchange (the person's, or a system event such as a cron
// job's) up to the next one.
type turn struct {
	first, last uint64 // message numbers
	time        int64  // unix seconds of its first message
	text        string // "User: ...\n\nAssistant: ..."; tool calls, tool output and reasoning left out
}

// splitTurns cuts transcript entries into turns. A turn starts at a user or system message
// that follows an answer (or starts the entries).
func splitTurns(entries []persistence.Entry) []turn {
	var out []turn
	var b strings.Builder
	open := false // the last entry was an answer or a tool result: the next prompt starts a turn
	flush := func() {
		if len(out) > 0 {
			out[len(out)-1].text = capText(strings.TrimSpace(b.String()), maxTurnBytes)
		}
		b.Reset()
	}
	for i, e := range entries {
		prompt := e.Role == messages.RoleUser || e.Role == messages.RoleSystem
		if i == 0 || prompt && open {
			flush()
			out = append(out, turn{first: e.Seq, time: e.Time.Unix()})
			if e.Time.IsZero() {
				out[len(out)-1].time = 0
			}
		}
		open = !prompt
		out[len(out)-1].last = e.Seq
		switch e.Role {
		case messages.RoleUser:
			if t := strings.TrimSpace(agent.InboundText(e.Content)); t != "" {
				b.WriteString("User: " + t + "\n\n")
			}
		case messages.RoleAssistant:
			if t := strings.TrimSpace(e.Content); t != "" && t != agent.SilentToken {
				b.WriteString("Assistant: " + t + "\n\n")
			}
		}
	}
	flush()
	return out
}

// capText cuts s to at most n bytes at a rune boundary.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// sessionChanges adds to ch what changed in the agent's own transcripts since they were
// last indexed: for a transcript updated since, its last indexed turn (it may have grown)
// and every turn after it; transcripts deleted leave the index, all of them when sessions
// are not a source (any more). x.mu is held.
func (x *Index) sessionChanges(r persistence.Reader, ch *changeSet) error {
	seen := map[string]bool{}
	if x.cfg.Sessions {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, info := range infos {
			if info.AgentID != x.cfg.AgentID {
				continue
			}
			p := SessionPrefix + info.Key
			seen[p] = true
			old, had, err := readFile(r, x.b, p)
			if err != nil {
				return err
			}
			if had && old.MTime == info.Updated.UnixNano() {
				continue
			}
			if err := x.sessionTail(r, info, old, ch); err != nil {
				return err
			}
		}
	}
	return r.Scan(x.b.files, SessionPrefix, func(p string, _ []byte) error {
		if !seen[p] {
			ch.removed = append(ch.removed, p)
		}
		return nil
	})
}

// sessionTail indexes a transcript from its last indexed turn on (old is its record, zero
// when it was never indexed).
func (x *Index) sessionTail(r persistence.Reader, info persistence.SessionInfo, old fileRec, ch *changeSet) error {
	p := SessionPrefix + info.Key
	var after uint64
	number := 1
	if old.TailSeq > 0 {
		after, number = old.TailSeq-1, old.TailTurn
	}
	entries, err := r.Messages(info.Key, after)
	if err != nil {
		return err
	}
	rec := old
	rec.MTime = info.Updated.UnixNano()
	if len(entries) == 0 {
		ch.files[p] = rec
		return nil
	}
	from := old.TailChunk
	var recs []*chunkRec
	for i, t := range splitTurns(entries) {
		if i > 0 {
			number++
		}
		rec.TailSeq, rec.TailChunk, rec.TailTurn = t.first, from+len(recs), number
		for _, ck := range splitChunks(t.text, x.cfg.ChunkTokens, x.cfg.OverlapTokens) {
			recs = append(recs, &chunkRec{Path: p, Start: int(t.first), End: int(t.last), Hash: hashText(ck.Text),
				Text: ck.Text, Turn: number, Time: t.time})
		}
	}
	rec.Seq = entries[len(entries)-1].Seq
	rec.Chunks = from + len(recs)
	ch.replaceFrom(p, rec, from, recs)
	return nil
}
