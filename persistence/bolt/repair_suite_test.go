package bolt

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The damaged-file suite of issue #32: a store written as reef writes it (a message accepted
// with its dedup mark, answered into the transcript and the outbox, the reply marked sent),
// then hurt in one way, then repaired. Each case says first what the repair must do; after
// each, whatever the case: no record is under a session it does not belong to, no session
// whose own pages are intact loses a record, no dedup mark on an intact page is lost, and
// nothing the repaired store would answer or send is something already answered or sent.

const suiteChats = 120

func suiteKey(c int) string  { return fmt.Sprintf("agent:main:telegram:direct:%d", 1000+c) }
func suiteChat(c int) string { return fmt.Sprint(1000 + c) }

// userContent is a user message as the transcript holds it (agent.FormatInbound): the
// metadata block first, then the text.
func userContent(in messages.Inbound) string {
	meta, _ := json.Marshal(map[string]string{"sender_id": in.SenderID, "chat_id": in.ChatID, "message_id": in.MessageID})
	return "Message metadata:\n<<<UNTRUSTED_DATA id=0 source=inbound_metadata>>>\n" + string(meta) +
		"\n<<<END_UNTRUSTED_DATA id=0>>>\n\n" + in.Text
}

// converse writes three exchanges in each of suiteChats chats, chat after chat, as reef's
// Connector and Session do; chat 0's last message stays unanswered and chat 1's last reply
// unsent (with its draft recorded).
func converse(t *testing.T, path string) {
	t.Helper()
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	update := func(fn func(persistence.Tx) error) {
		t.Helper()
		if err := s.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	for e := range 3 {
		for c := range suiteChats {
			key, chat := suiteKey(c), suiteChat(c)
			now = now.Add(time.Second)
			text := fmt.Sprintf("tok-%d-%d %s", c, e, strings.Repeat("words ", 40+35*(c%5)))
			in := messages.Inbound{Channel: "telegram", ChatID: chat, ChatType: messages.ChatDirect, SenderID: chat,
				MessageID: fmt.Sprint(100*e + 7), Text: text, Time: now}
			var inSeq, outSeq uint64
			update(func(tx persistence.Tx) error { // the Connector accepts the message
				if _, err := tx.MarkSeen("telegram::"+chat+":"+in.MessageID, now); err != nil {
					return err
				}
				inSeq, err = tx.AppendInbox(key, in)
				return err
			})
			if c == 0 && e == 2 {
				continue
			}
			update(func(tx persistence.Tx) error { // the Session answers it
				user := messages.ChatMessage{Role: messages.RoleUser, Content: userContent(in), Time: now}
				reply := messages.ChatMessage{Role: messages.RoleAssistant, Content: fmt.Sprintf("reply to tok-%d-%d", c, e), Time: now}
				if _, err := tx.AppendMessages(key, user, reply); err != nil {
					return err
				}
				if err := tx.DeleteInbox(key, inSeq); err != nil {
					return err
				}
				if outSeq, err = tx.AppendOutbox(key, messages.Outbound{Channel: "telegram", ChatID: chat, Text: reply.Content}); err != nil {
					return err
				}
				if err := tx.Put(drafts, key, []byte(chat+"\n"+fmt.Sprint(500+e)+"\n"+key)); err != nil {
					return err
				}
				return tx.PutSession(persistence.SessionInfo{Key: key, AgentID: "main", Channel: "telegram", ChatID: chat,
					Created: now, Updated: now, Turns: e + 1})
			})
			if c == 1 && e == 2 {
				continue
			}
			update(func(tx persistence.Tx) error { // the Connector marks the reply sent
				if err := tx.DeleteOutbox(key, outSeq); err != nil {
					return err
				}
				return tx.Delete(drafts, key)
			})
		}
	}
}

// truth is what a healthy file holds, with the pages that hold it.
type truth struct {
	sessions map[string]*bucket         // key → the session's bucket
	pages    map[string]map[uint64]bool // key → the pages of the session's own tree
	marks    map[string]uint64          // dedup mark → the page that holds it
	pending  map[string]bool            // "<key> inbox|outbox <seq> <value>" of every pending row
	ps       uint64                     // page size
	metaRoot uint64                     // the root page of the last transaction
	buckets  map[string]uint64          // "sessions", "dedup": their root pages
	leaves   map[string]map[uint64]bool // "sessions", "dedup": their leaf pages
	msgsRoot map[string]uint64          // key → its transcript's root page
	top      map[string]uint64          // key → its session's top page
}

func readTruth(t *testing.T, path string) *truth {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := newPageFile(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := &truth{sessions: map[string]*bucket{}, pages: map[string]map[uint64]bool{}, marks: map[string]uint64{},
		pending: map[string]bool{}, ps: pf.meta.pageSize, metaRoot: pf.meta.root, buckets: map[string]uint64{},
		leaves: map[string]map[uint64]bool{}, msgsRoot: map[string]uint64{}, top: map[string]uint64{}}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(btx *bbolt.Tx) error {
		for _, name := range []string{"sessions", "dedup"} {
			tr.buckets[name] = uint64(btx.Bucket([]byte(name)).Root())
		}
		return btx.Bucket(bucketSessions).ForEachBucket(func(k []byte) error {
			sb := btx.Bucket(bucketSessions).Bucket(k)
			hdr := make([]byte, bucketHeaderSize)
			native.PutUint64(hdr, uint64(sb.Root()))
			c := readCandidate(pf, nil, orphanHeader{key: string(k), value: hdr})
			tr.sessions[string(k)], tr.pages[string(k)] = c.b, c.pages
			tr.msgsRoot[string(k)] = uint64(sb.Bucket(bucketMsgs).Root())
			tr.top[string(k)] = uint64(sb.Root())
			for _, name := range []string{"inbox", "outbox"} {
				for seq, v := range c.b.kid(name, true).vals {
					tr.pending[fmt.Sprintf("%s %s %x %s", k, name, seq, v)] = true
				}
			}
			return nil
		})
	})
	for _, name := range []string{"sessions", "dedup"} {
		w := newWalker(pf)
		tr.leaves[name] = map[uint64]bool{}
		w.value = func(path [][]byte, k, _ []byte) {
			if len(path) == 1 {
				tr.leaves[name][w.at] = true
				tr.marks[string(k)] = w.at
			}
		}
		w.bucket = func(path [][]byte, _ uint64) { // a sessions leaf holds bucket headers
			if len(path) == 2 {
				tr.leaves[name][w.at] = true
			}
		}
		w.tree([][]byte{[]byte(name)}, tr.buckets[name], 1, nil, nil)
	}
	return tr
}

// intact reports whether none of pages is in hurt.
func intact(pages map[uint64]bool, hurt map[uint64]bool) bool {
	for id := range pages {
		if hurt[id] {
			return false
		}
	}
	return true
}

// overwrite writes 4 KB of seeded random bytes over page id.
func overwrite(t *testing.T, path string, id, ps uint64) {
	t.Helper()
	junk := make([]byte, ps)
	r := rand.New(rand.NewPCG(id, 32))
	for i := range junk {
		junk[i] = byte(r.Uint32())
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(junk, int64(id*ps)); err != nil {
		t.Fatal(err)
	}
}

// usedPages is how many pages the last transaction says the file has.
func usedPages(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := newPageFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return pf.meta.pgid
}

// anyOf returns the smallest page of set, for a deterministic pick.
func anyOf(set map[uint64]bool) uint64 {
	return slices.Min(slices.Collect(func(yield func(uint64) bool) {
		for id := range set {
			if !yield(id) {
				return
			}
		}
	}))
}

// pageOf reads the flags of page id.
func flagsOf(t *testing.T, path string, id, ps uint64) uint16 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return native.Uint16(b[id*ps+8:])
}

// middle returns the middle page of set, in id order.
func middle(set map[uint64]bool) uint64 {
	ids := slices.Sorted(func(yield func(uint64) bool) {
		for id := range set {
			if !yield(id) {
				return
			}
		}
	})
	return ids[len(ids)/2]
}

func TestRepairSuite(t *testing.T) {
	truncate := func(quarters uint64) func(*testing.T, string, *truth) map[uint64]bool {
		return func(t *testing.T, path string, tr *truth) map[uint64]bool {
			used := usedPages(t, path)
			cut := used * quarters / 4
			if err := os.Truncate(path, int64(cut*tr.ps)); err != nil {
				t.Fatal(err)
			}
			hurt := map[uint64]bool{}
			for id := cut; id < used; id++ {
				hurt[id] = true
			}
			return hurt
		}
	}
	garble := func(pick func(t *testing.T, path string, tr *truth) uint64) func(*testing.T, string, *truth) map[uint64]bool {
		return func(t *testing.T, path string, tr *truth) map[uint64]bool {
			id := pick(t, path, tr)
			overwrite(t, path, id, tr.ps)
			return map[uint64]bool{id: true}
		}
	}
	zeroMeta := func(newest bool) func(*testing.T, string, *truth) map[uint64]bool {
		return func(t *testing.T, path string, tr *truth) map[uint64]bool {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			pf, err := newPageFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var txid [2]uint64
			for i := range 2 {
				m, err := pf.metaAt(int64(uint64(i) * tr.ps))
				if err != nil {
					t.Fatal(err)
				}
				txid[i] = m.txid
			}
			page := 0
			if (txid[1] > txid[0]) == newest {
				page = 1
			}
			if _, err := f.WriteAt(make([]byte, tr.ps), int64(page)*int64(tr.ps)); err != nil {
				t.Fatal(err)
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name   string
		expect string // what the repair must do, written before it ran
		hurt   func(t *testing.T, path string, tr *truth) map[uint64]bool
		older  bool // the copy is (or may be) of the transaction before the last
		found  bool // conversations must be recovered from outside the tree
	}{
		{"truncated to a quarter", "the root and most sessions are cut off: sessions whose own pages are left are recovered whole, with their unanswered messages and unsent replies held back; no stale page is grafted", truncate(1), false, true},
		{"truncated to half", "as for a quarter, with more sessions recovered", truncate(2), false, true},
		{"truncated to three quarters", "as for a quarter, with more sessions recovered", truncate(3), false, true},
		{"random bytes over the root", "the last transaction's root is unreadable: the one before it is copied whole, and every pending row is held back (the last transaction may have answered or sent it)", garble(func(_ *testing.T, _ string, tr *truth) uint64 { return tr.metaRoot }), true, false},
		{"random bytes over the sessions branch", "every session is cut off from the tree and recovered from its own intact pages; pending rows held back", garble(func(t *testing.T, path string, tr *truth) uint64 {
			if flagsOf(t, path, tr.buckets["sessions"], tr.ps) != pageBranch {
				t.Fatal("the sessions bucket's root is not a branch: write more chats")
			}
			return tr.buckets["sessions"]
		}), false, true},
		{"random bytes over a sessions leaf", "the sessions listed in it are recovered from their own intact pages, the others kept as they were", garble(func(_ *testing.T, _ string, tr *truth) uint64 { return middle(tr.leaves["sessions"]) }), false, true},
		{"random bytes over a session's top page", "that one session's current version is lost; an older version that fits may be recovered (held back); every other session kept", garble(func(_ *testing.T, _ string, tr *truth) uint64 { return tr.top[suiteKey(7)] }), false, false},
		{"random bytes over a transcript leaf", "that session is kept with the entries of that page lost; every other session kept", garble(func(t *testing.T, path string, tr *truth) uint64 {
			id := tr.msgsRoot[suiteKey(5)]
			if flagsOf(t, path, id, tr.ps) != pageLeaf {
				t.Fatal("chat 5's transcript is not one leaf page")
			}
			return id
		}), false, false},
		{"random bytes over a dedup leaf", "the marks on it are lost (older copies of them in free pages, where any are left, are recovered); everything else kept", garble(func(_ *testing.T, _ string, tr *truth) uint64 { return middle(tr.leaves["dedup"]) }), false, false},
		{"zeroed newest meta page", "the other meta page is one transaction older: its tree is copied whole, pending rows held back", zeroMeta(true), true, false},
		{"zeroed older meta page", "nothing says which meta page was the last: the remaining one is copied whole, pending rows held back", zeroMeta(false), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reef.db")
			converse(t, path)
			tr := readTruth(t, path)
			hurt := tc.hurt(t, path, tr)
			rep, err := Repair(path, time.Now())
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if rep.Older != tc.older {
				t.Errorf("Older = %v, want %v (%v)", rep.Older, tc.older, rep.Damage)
			}
			if tc.found && rep.Recovered == 0 {
				t.Error("no conversation was recovered from outside the tree")
			}
			checkRepaired(t, path, tr, hurt, rep)
		})
	}
}

// checkRepaired checks what every repair must give, whatever the damage.
func checkRepaired(t *testing.T, path string, tr *truth, hurt map[uint64]bool, rep RepairReport) {
	t.Helper()
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the repaired file does not open: %v", err)
	}
	defer s.Close()
	states := map[string]int{}
	for _, c := range rep.Conversations {
		states[c.State]++
		if c.State == ConvLost && states[c.State] <= 3 {
			t.Logf("lost %s: %s", c.Key, c.Why)
		}
	}
	keptWhole, marksKept := 0, 0
	err = s.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, in := range infos {
			got[in.Key] = true
			var c int
			fmt.Sscanf(strings.TrimPrefix(in.Key, "agent:main:telegram:direct:"), "%d", &c)
			mark := fmt.Sprintf("tok-%d-", c-1000)
			msgs, _ := r.Messages(in.Key, 0)
			want := tr.sessions[in.Key].kid("msgs", true).vals
			for _, m := range msgs {
				if !strings.Contains(m.Content, mark) {
					t.Errorf("%s holds another chat's entry %d: %.80q", in.Key, m.Seq, m.Content)
				} else if v := want[string(itob(m.Seq))]; v == nil {
					t.Errorf("%s holds an entry %d it never had", in.Key, m.Seq)
				} else if tm := (messages.ChatMessage{}); json.Unmarshal(v, &tm) != nil || tm.Content != m.Content {
					t.Errorf("%s holds at %d an entry other than its own", in.Key, m.Seq)
				}
			}
			inbox, _ := r.Inbox(in.Key)
			outbox, _ := r.Outbox(in.Key)
			for _, it := range inbox {
				v, _ := json.Marshal(it.Inbound)
				if !tr.pending[fmt.Sprintf("%s inbox %x %s", in.Key, itob(it.Seq), v)] {
					t.Errorf("%s would answer inbox item %d again: it was answered", in.Key, it.Seq)
				}
			}
			for _, it := range outbox {
				v, _ := json.Marshal(it.Outbound)
				if !tr.pending[fmt.Sprintf("%s outbox %x %s", in.Key, itob(it.Seq), v)] {
					t.Errorf("%s would send reply %d again: it was sent", in.Key, it.Seq)
				}
			}
		}
		for key, pages := range tr.pages {
			if !intact(pages, hurt) {
				continue
			}
			msgs, _ := r.Messages(key, 0)
			if !got[key] || len(msgs) != len(tr.sessions[key].kid("msgs", true).vals) {
				t.Errorf("%s: its pages are intact, but the repair kept %d of its %d entries (in the list: %v)",
					key, len(msgs), len(tr.sessions[key].kids["msgs"].vals), got[key])
				continue
			}
			keptWhole++
		}
		for mark, page := range tr.marks {
			if hurt[page] {
				continue
			}
			if seen, _ := r.Seen(mark); !seen {
				t.Errorf("dedup mark %s on intact page %d lost", mark, page)
			} else {
				marksKept++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages hurt; conversations %v; %d intact sessions kept whole; %d marks on intact pages kept, %d recovered; %d problems",
		len(hurt), states, keptWhole, marksKept, rep.Marks, rep.Lost)
}

// TestRepairRefusesStalePointers: an old version of a session's top page, left in a free
// page, points to a transcript page that another session uses now. With the session's
// current top page damaged, the repair must not graft the other session's transcript into
// it: the page belongs to the tree, or (when the other session is cut off too) its entries
// name another chat.
func TestRepairRefusesStalePointers(t *testing.T) {
	for _, both := range []bool{false, true} {
		t.Run(fmt.Sprintf("other session damaged too: %v", both), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "reef.db")
			converse(t, path)
			tr := readTruth(t, path)
			a, b := suiteKey(3), suiteKey(4)
			// an old top page of a: a free page whose info names it
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := newPageFile(f)
			if err != nil {
				t.Fatal(err)
			}
			live := newWalker(pf)
			live.walk()
			stale := uint64(0)
			for id := uint64(2); id < pf.meta.pgid && stale == 0; id++ {
				if !live.seen[id] {
					stale = id
				}
			}
			if stale == 0 {
				t.Fatal("no free page")
			}
			// a copy of a's top page, as an old version would be, pointing into b's transcript
			buf, err := pf.page(tr.top[a])
			if err != nil {
				t.Fatal(err)
			}
			native.PutUint64(buf, stale)
			native.PutUint64(leafBuckets(buf)["msgs"], tr.msgsRoot[b])
			if _, err := f.WriteAt(buf, int64(stale*tr.ps)); err != nil {
				t.Fatal(err)
			}
			f.Close()
			hurt := map[uint64]bool{tr.top[a]: true}
			overwrite(t, path, tr.top[a], tr.ps)
			if both {
				hurt[tr.top[b]] = true
				overwrite(t, path, tr.top[b], tr.ps)
			}
			rep, err := Repair(path, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			checkRepaired(t, path, tr, hurt, rep)
		})
	}
}

// TestRepairKeepsDeletedSessionsDeleted: a session deleted before the damage (as an
// archived sub-agent's is) has its old pages lying around; with the sessions bucket whole,
// the repair does not bring it back.
func TestRepairKeepsDeletedSessionsDeleted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reef.db")
	converse(t, path)
	gone := suiteKey(9)
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx persistence.Tx) error { return tx.DeleteSession(gone) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	tr := readTruth(t, path)
	overwrite(t, path, tr.msgsRoot[suiteKey(5)], tr.ps)
	rep, err := Repair(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	checkRepaired(t, path, tr, map[uint64]bool{tr.msgsRoot[suiteKey(5)]: true}, rep)
	s = open(t, path)
	defer s.Close()
	if err := s.View(func(r persistence.Reader) error {
		if _, ok, _ := r.Session(gone); ok {
			t.Errorf("the deleted session %s is back", gone)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
