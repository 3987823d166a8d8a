package actors_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels/fake"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// killStore plays a SIGKILL for the store: from the first transaction that makes a write kill
// names on, no write reaches the file any more, and dies (when set) is called.
type killStore struct {
	persistence.Store
	dead atomic.Bool
	kill func(op, bucket string, value []byte) bool // op: "put" or "deleteOutbox"
	dies func()
}

var errKilled = errors.New("the process is gone")

func (s *killStore) Update(fn func(persistence.Tx) error) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.Store.Update(func(t persistence.Tx) error { return fn(&killTx{Tx: t, store: s}) })
}

func (s *killStore) killed(op, bucket string, value []byte) bool {
	if !s.kill(op, bucket, value) {
		return false
	}
	if !s.dead.Swap(true) && s.dies != nil {
		s.dies()
	}
	return true
}

type killTx struct {
	persistence.Tx
	store *killStore
}

func (t *killTx) DeleteOutbox(key string, seq uint64) error {
	if t.store.killed("deleteOutbox", "", nil) {
		return errKilled
	}
	return t.Tx.DeleteOutbox(key, seq)
}

func (t *killTx) Put(bucket, key string, value []byte) error {
	if t.store.killed("put", bucket, value) {
		return errKilled
	}
	return t.Tx.Put(bucket, key, value)
}

// wrapOnce is a harnessOpts.wrapStore that puts s around the harness's store.
func (s *killStore) wrapOnce() func(persistence.Store) persistence.Store {
	var once sync.Once
	return func(st persistence.Store) persistence.Store { once.Do(func() { s.Store = st }); return s }
}

// TestDeliveredDraftSurvivesCrash: a kill between the edit that delivers an answer into its
// draft and the write that marks the reply sent leaves the draft owned by that reply, not by
// the session's next run: the next (silent) run after the restart neither edits nor deletes
// the answer, and the resend of the reply repeats the same text at most.
func TestDeliveredDraftSurvivesCrash(t *testing.T) {
	ed := fake.NewEditable()
	store := &killStore{kill: func(op, _ string, _ []byte) bool { return op == "deleteOutbox" }}
	h := newHarness(t, harnessOpts{editable: ed, script: fakellm.NewScript(fakellm.Reply{Text: "the answer"}),
		wrapStore: store.wrapOnce()})
	h.say("1", "question")
	waitShown(t, ed, "1", "the answer")
	waitFor(t, store.dead.Load)
	answer := ed.IDs("1")[0]
	key := h.key("1")
	h.stop()

	// What the kill left: the run's slot must not name the delivered answer.
	st, err := bolt.Open(h.dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var run string
	st.View(func(r persistence.Reader) error {
		v, _, err := r.Get("drafts", key)
		run = string(v)
		return err
	})
	st.Close()
	if chat, rest, _ := strings.Cut(run, "\n"); chat == "1" && strings.HasPrefix(rest, answer+"\n") {
		t.Errorf("after the kill the session's run draft is the delivered answer %s (%q): the next run would take it", answer, run)
	}

	h2 := newHarness(t, harnessOpts{editable: ed, dbPath: h.dbPath, script: fakellm.NewScript(
		fakellm.Reply{Text: "NO_REPLY"}, fakellm.Reply{Text: "NO_REPLY"})})
	h2.say("1", "spawn and yield, say nothing")
	waitFinal(t, h2)
	waitFor(t, func() bool {
		var n int
		h2.store.View(func(r persistence.Reader) error { out, _ := r.Outbox(key); n = len(out); return nil })
		return n == 0
	})
	h2.stop()
	texts, deletes := ed.History(answer)
	if deletes > 0 || !slices.Equal(texts, []string{"…", "the answer"}) {
		t.Errorf("the delivered answer was touched afterwards: it showed %q and was deleted %d times", texts, deletes)
	}
	if got := ed.Shown("1"); !slices.Equal(got, []string{"the answer"}) {
		t.Errorf("the chat shows %q, want only the answer", got)
	}
}

// TestDraftIDSurvivesCrash: a kill after the platform took a draft and before its id was
// committed leaves no stray draft: the journal kept the id, and after the restart the reply
// is edited into that draft instead of a new one.
func TestDraftIDSurvivesCrash(t *testing.T) {
	ed := fake.NewEditable()
	journals := t.TempDir()
	store := &killStore{kill: func(op, bucket string, value []byte) bool {
		_, rest, _ := strings.Cut(string(value), "\n")
		return op == "put" && bucket == "drafts" && !strings.HasPrefix(rest, "\n") // the draft's id
	}}
	down := errors.New("the process is gone")
	store.dies = func() { ed.SendErr.Store(&down) }
	h := newHarness(t, harnessOpts{editable: ed, script: fakellm.NewScript(fakellm.Reply{Text: "the answer"}),
		wrapStore: store.wrapOnce(), depsHook: func(d *actors.Deps) { d.Journals = journals }})
	h.say("1", "question")
	waitShown(t, ed, "1", "…")
	waitFor(t, store.dead.Load)
	h.stop()
	ed.SendErr.Store(nil)

	h2 := newHarness(t, harnessOpts{editable: ed, dbPath: h.dbPath, depsHook: func(d *actors.Deps) { d.Journals = journals }})
	key := h.key("1")
	waitFor(t, func() bool {
		var n int
		h2.store.View(func(r persistence.Reader) error { out, _ := r.Outbox(key); n = len(out); return nil })
		return n == 0
	})
	if got := ed.Shown("1"); !slices.Equal(got, []string{"the answer"}) {
		t.Errorf("after the restart the chat shows %q, want the answer in the draft sent before the kill", got)
	}
}

// TestGoneDraftGetsAFreshOne: when the run's draft cannot take the answer (deleted on the
// platform), the answer goes into a fresh draft recorded for it, not into a plain message: a
// resend after a crash then repeats an edit instead of sending the answer twice.
func TestGoneDraftGetsAFreshOne(t *testing.T) {
	clock, g, ed, _, status := startRunOnClock(t)
	clock.Advance(500 * time.Millisecond)
	waitShown(t, ed, "1", status, "…")
	shown := ed.IDs("1")
	ed.Delete(context.Background(), "1", shown[len(shown)-1]) // gone from the chat
	g.answer(fakellm.Reply{Text: "the answer"})
	waitShown(t, ed, "1", status, "the answer")
	ids := ed.IDs("1")
	if texts, _ := ed.History(ids[len(ids)-1]); !slices.Equal(texts, []string{"…", "the answer"}) {
		t.Errorf("the answer's message showed %q, want a draft edited into the answer", texts)
	}
}
