package bolt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// A repair copies a session only as far as its records fit the session: a page that a
// stale pointer reaches (one freed and since reused) holds records of another kind, another
// session or a later sequence, and they must not be grafted in. checkSession says what does
// not fit and takes it out.

// bucket is a bucket read from the damaged file: what the repair writes into the new one.
type bucket struct {
	seq  uint64
	vals map[string][]byte
	kids map[string]*bucket
}

func newBucket(seq uint64) *bucket {
	return &bucket{seq: seq, vals: map[string][]byte{}, kids: map[string]*bucket{}}
}

// at returns the bucket at path below b, or nil.
func (b *bucket) at(path [][]byte) *bucket {
	for _, p := range path {
		if b == nil {
			return nil
		}
		b = b.kids[string(p)]
	}
	return b
}

// kid returns the sub-bucket name of b, creating it when create is set.
func (b *bucket) kid(name string, create bool) *bucket {
	k := b.kids[name]
	if k == nil && create {
		k = newBucket(0)
		b.kids[name] = k
	}
	return k
}

// records counts the values in b and below it.
func (b *bucket) records() int {
	n := len(b.vals)
	for _, k := range b.kids {
		n += k.records()
	}
	return n
}

// collect makes w copy what it visits into root (the bucket the walk starts in).
func collect(w *walker, root *bucket) {
	w.bucket = func(path [][]byte, seq uint64) {
		parent := root.at(path[:len(path)-1])
		if parent == nil {
			return
		}
		name := string(path[len(path)-1])
		if k := parent.kids[name]; k != nil {
			k.seq = max(k.seq, seq)
		} else {
			parent.kids[name] = newBucket(seq)
		}
	}
	w.value = func(path [][]byte, k, v []byte) {
		if b := root.at(path); b != nil && len(path) > 0 {
			b.vals[string(k)] = slices.Clone(v)
		}
	}
}

// sessionKeys are the keys a session's bucket holds (tx.go); a bucket with others is not one.
var sessionKeys = map[string]bool{"info": true, "msgs": true, "snaps": true, "inbox": true, "outbox": true}

// checkSession takes out of the session bucket b (key) every record that does not fit it and
// says what it took: other keys or buckets than a session's, an info record that does not
// decode or names another session, keys that are not seqs or lie past their bucket's
// sequence, values that do not decode as their kind, inbox and outbox items that name another
// session or seq, snapshots past the transcript, and transcript messages from another chat.
func checkSession(key string, b *bucket) []string {
	var misfits []string
	misfit := func(format string, args ...any) { misfits = append(misfits, fmt.Sprintf(format, args...)) }
	var info persistence.SessionInfo
	for k, v := range b.vals {
		if k == "info" && json.Unmarshal(v, &info) == nil && info.Key == key {
			continue
		}
		misfit("record %q", k)
		delete(b.vals, k)
	}
	for name, sub := range b.kids {
		if name == "info" || !sessionKeys[name] {
			misfit("bucket %q", name)
			delete(b.kids, name)
			continue
		}
		for n := range sub.kids {
			misfit("bucket %s/%q", name, n)
		}
		clear(sub.kids)
	}
	var last uint64 // the transcript's sequence: no snapshot covers more
	if msgs := b.kids["msgs"]; msgs != nil {
		last = msgs.seq
	}
	chat := ""
	if info.ChatID != "" && strings.HasSuffix(key, ":"+info.ChatID) { // a session of one chat
		chat = info.ChatID
	}
	for name, sub := range b.kids {
		for k, v := range sub.vals {
			if why := recordMisfit(key, name, chat, []byte(k), v, sub.seq, last); why != "" {
				misfit("%s %x: %s", name, k, why)
				delete(sub.vals, k)
			}
		}
	}
	slices.Sort(misfits)
	return misfits
}

// recordMisfit says why the record k, v of a session's sub-bucket name does not fit, or "".
func recordMisfit(key, name, chat string, k, v []byte, seq, last uint64) string {
	if len(k) != 8 {
		return "not a seq"
	}
	n := btoi(k)
	if name == "snaps" {
		var snap persistence.Snapshot
		switch {
		case n > last:
			return fmt.Sprintf("covers seq %d, past the transcript's last %d", n, last)
		case json.Unmarshal(v, &snap) != nil:
			return "not a snapshot"
		}
		return ""
	}
	if n == 0 || n > seq {
		return fmt.Sprintf("seq %d past the bucket's sequence %d", n, seq)
	}
	switch name {
	case "msgs":
		var m messages.ChatMessage
		if json.Unmarshal(v, &m) != nil || m.Role == "" {
			return "not a transcript entry"
		}
		if got := messageChat(m); chat != "" && got != "" && got != chat {
			return fmt.Sprintf("a message of chat %q", got)
		}
	case "inbox":
		var in messages.Inbound
		if json.Unmarshal(v, &in) != nil || in.SessionKey != key || in.InboxSeq != n {
			return fmt.Sprintf("an inbox item of %q #%d", in.SessionKey, in.InboxSeq)
		}
	case "outbox":
		var out messages.Outbound
		if json.Unmarshal(v, &out) != nil || out.SessionKey != key || out.OutboxSeq != n {
			return fmt.Sprintf("an outbox item of %q #%d", out.SessionKey, out.OutboxSeq)
		}
	}
	return ""
}

// metaField returns the value of field in the metadata block that opens a user message
// (agent.FormatInbound), or "".
func metaField(m messages.ChatMessage, field string) string {
	if m.Role != messages.RoleUser || !strings.HasPrefix(m.Content, "Message metadata:") {
		return ""
	}
	block, _, _ := strings.Cut(m.Content, "\n\n")
	_, rest, ok := strings.Cut(block, `"`+field+`":`)
	if !ok {
		return ""
	}
	var s string
	if json.NewDecoder(strings.NewReader(rest)).Decode(&s) != nil {
		return ""
	}
	return s
}

// messageChat returns the chat id a user message's metadata names, or "".
func messageChat(m messages.ChatMessage) string { return metaField(m, "chat_id") }
