package bolt

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
)

// Buckets the repair writes what it holds back into (actors/session_poison.go and
// actors/connector_retry.go name them too): `reef status` counts them, nothing sends them.
const (
	drafts     = "drafts"     // session key → the draft a run's reply is edited into
	deadLetter = "deadletter" // "<session key>#<20-digit inbox seq>" → the Inbound as JSON
	deadReply  = "deadreply"  // "<session key>#<20-digit outbox seq>" → the Outbound as JSON
)

// salvage writes what can be read of pf and proven current and consistent into a new
// database at dst, then checks it.
func salvage(pf *pageFile, dst string, now time.Time, rep *RepairReport) error {
	root := gather(pf, now, rep)
	db, err := bbolt.Open(dst, 0o600, &bbolt.Options{Timeout: DefaultLockTimeout, NoFreelistSync: true,
		FreelistType: bbolt.FreelistMapType})
	if err != nil {
		return err
	}
	err = db.Update(func(btx *bbolt.Tx) error {
		for _, name := range slices.Sorted(maps.Keys(root.kids)) {
			b, err := btx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return fmt.Errorf("bucket %q: %w", name, err)
			}
			if err := fill(b, root.kids[name], rep); err != nil {
				return fmt.Errorf("bucket %q: %w", name, err)
			}
		}
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	s, err := Open(dst, Options{})
	if err != nil {
		return fmt.Errorf("the new file does not open: %w", err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		return fmt.Errorf("the new file fails its check: %w", err)
	}
	return nil
}

// fill writes src into b.
func fill(b *bbolt.Bucket, src *bucket, rep *RepairReport) error {
	rep.Buckets++
	if err := b.SetSequence(src.seq); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(src.vals)) {
		if err := b.Put([]byte(k), src.vals[k]); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		rep.Records++
	}
	for _, name := range slices.Sorted(maps.Keys(src.kids)) {
		kid, err := b.CreateBucketIfNotExists([]byte(name))
		if err == nil {
			err = fill(kid, src.kids[name], rep)
		}
		if err != nil {
			return fmt.Errorf("bucket %q: %w", name, err)
		}
	}
	return nil
}

// gather reads the tree of pf's meta, checking every session in it, adds the sessions,
// transcript entries and dedup marks found outside it, holds back what a conversation that
// may be older than it was would answer or send again, and fills in rep's conversations.
func gather(pf *pageFile, now time.Time, rep *RepairReport) *bucket {
	root, convs, seen, listWhole := readTree(pf, rep)
	sessions := root.kid(string(bucketSessions), true)
	taken := recoverSessions(pf, sessions, convs, seen, listWhole, rep)
	var lost []string
	for key, c := range convs {
		if c.State == ConvLost {
			lost = append(lost, key)
		}
	}
	for key, n := range fillLoose(findLoose(pf, taken), sessions, lost) {
		c := convs[key]
		c.Loose += n
		if c.State == ConvLost {
			c.State, c.Why, c.Rebuilt = ConvRecovered, "", true
			rep.Recovered++
		}
	}
	dedup := root.kid(string(bucketDedup), true)
	for k, v := range orphanMarks(pf, seen, now) {
		if dedup.vals[k] == nil {
			dedup.vals[k] = v
			rep.Marks++
		}
	}
	for _, key := range slices.Sorted(maps.Keys(convs)) {
		c := convs[key]
		if b := sessions.kids[key]; b != nil {
			if c.State == ConvOlder || c.State == ConvRecovered {
				holdBack(root, b, key, c)
			}
			if msgs := b.kids["msgs"]; msgs != nil {
				c.Messages = len(msgs.vals)
			}
		} else { // lost: its drafts may hold a delivered answer
			dropDrafts(root, key)
		}
		rep.Conversations = append(rep.Conversations, *c)
	}
	return root
}

// readTree copies the tree of pf's meta, takes out of each session what does not fit it,
// and says per session what came through. It returns the pages the tree holds, and whether
// the sessions bucket's own pages were all read (then a session it does not list was
// deleted).
func readTree(pf *pageFile, rep *RepairReport) (root *bucket, convs map[string]*Conversation, seen map[uint64]bool, listWhole bool) {
	w := newWalker(pf)
	root = newBucket(0)
	collect(w, root)
	damaged := map[string]int{} // session key → problems met inside it
	listHurt := false           // a problem in the sessions bucket's own pages
	w.hurt = func(path [][]byte) {
		switch {
		case len(path) >= 2 && string(path[0]) == string(bucketSessions):
			damaged[string(path[1])]++
		case len(path) == 1 && string(path[0]) == string(bucketSessions):
			listHurt = true
		}
	}
	w.walk()
	rep.Lost = w.count
	listWhole = root.kids[string(bucketSessions)] != nil && !listHurt

	sessions := root.kid(string(bucketSessions), true)
	convs = map[string]*Conversation{}
	state := ConvKept
	if rep.Older {
		state = ConvOlder
	}
	for key, b := range sessions.kids {
		c := &Conversation{Key: key, State: state, Damaged: damaged[key], Misfits: len(checkSession(key, b))}
		convs[key] = c
		if b.vals["info"] == nil {
			delete(sessions.kids, key)
			c.State, c.Why = ConvLost, "its own pages are damaged"
		} else if c.State == ConvKept && c.Damaged+c.Misfits > 0 {
			c.State = ConvDamaged
		}
	}
	for key, n := range damaged {
		if convs[key] == nil {
			convs[key] = &Conversation{Key: key, State: ConvLost, Damaged: n, Why: "its bucket is damaged"}
		}
	}
	return root, convs, w.seen, listWhole
}

// recoverSessions adds to sessions the sessions found outside the tree (pages in seen):
// those the tree lost, and, unless the sessions bucket was read whole, any it does not list.
// It returns the pages the tree and the recovered sessions hold.
func recoverSessions(pf *pageFile, sessions *bucket, convs map[string]*Conversation, seen map[uint64]bool, listWhole bool,
	rep *RepairReport) map[uint64]bool {
	found, failed := findOrphans(pf, seen, func(key string) bool {
		return sessions.kids[key] == nil && (!listWhole || convs[key] != nil)
	})
	taken := maps.Clone(seen)
	for _, c := range found {
		sessions.kids[c.key] = c.b
		convs[c.key] = &Conversation{Key: c.key, State: ConvRecovered, Damaged: c.beyond, Loose: c.merged}
		rep.Recovered++
		maps.Copy(taken, c.pages)
	}
	for key, why := range failed {
		if c := convs[key]; c == nil || c.State == ConvLost {
			convs[key] = &Conversation{Key: key, State: ConvLost, Why: "its copies outside the tree do not fit it: " + why}
		}
	}
	return taken
}

// holdBack keeps the session b (key), whose state may be older than it was, from answering
// or sending anything again when reef starts: an unanswered message its transcript already
// answers is dropped, the others are set aside as dead letters; unsent replies are set aside
// as dead replies (they may have been delivered: reef prefers not to send twice); its draft
// record is dropped, since the message it names may hold a delivered answer, and so are the
// records of a run it had in progress or waiting.
func holdBack(root, b *bucket, key string, c *Conversation) {
	answered := map[string]bool{} // chat id + message id of every message the transcript holds
	if msgs := b.kids["msgs"]; msgs != nil {
		for _, v := range msgs.vals {
			var m messages.ChatMessage
			if json.Unmarshal(v, &m) == nil {
				if id := metaField(m, "message_id"); id != "" {
					answered[metaField(m, "chat_id")+"\x00"+id] = true
				}
			}
		}
	}
	if inbox := b.kids["inbox"]; inbox != nil {
		for k, v := range inbox.vals {
			var in messages.Inbound
			if json.Unmarshal(v, &in) == nil && in.MessageID != "" && answered[in.ChatID+"\x00"+in.MessageID] {
				c.Answered++
			} else {
				root.kid(deadLetter, true).vals[rowRef(key, btoi([]byte(k)))] = v
				c.HeldMessages++
			}
		}
		clear(inbox.vals)
	}
	if outbox := b.kids["outbox"]; outbox != nil {
		for k, v := range outbox.vals {
			root.kid(deadReply, true).vals[rowRef(key, btoi([]byte(k)))] = v
			c.HeldReplies++
		}
		clear(outbox.vals)
	}
	dropDrafts(root, key)
	// an interrupted run's record and a run waiting for the model: both go on with the
	// messages just set aside (actors/turn_started.go, actors/session_outage.go)
	if started := root.at([][]byte{[]byte("runs"), []byte("started")}); started != nil {
		for k := range started.vals {
			if strings.HasPrefix(k, key+"\n") {
				delete(started.vals, k)
			}
		}
	}
	if waiting := root.at([][]byte{[]byte("runs"), []byte("waiting")}); waiting != nil {
		delete(waiting.vals, key)
	}
}

// rowRef names an inbox or outbox row in the dead letter buckets.
func rowRef(key string, seq uint64) string { return fmt.Sprintf("%s#%020d", key, seq) }

// dropDrafts removes a conversation's draft records: its run's (under the session key) and
// those its replies took (session key, newline, outbox seq; actors/connector_draft.go).
func dropDrafts(root *bucket, key string) {
	d := root.kids[drafts]
	if d == nil {
		return
	}
	for k := range d.vals {
		if k == key || strings.HasPrefix(k, key+"\n") {
			delete(d.vals, k)
		}
	}
}
