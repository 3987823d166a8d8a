package actors_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools/sessions"
)

// Disk states of fullDisk.
const (
	diskOK     int32 = iota
	diskFull         // every write fails
	diskNearly       // a write that appends transcript entries fails; small ones pass
	diskMark         // a write that deletes an outbox row (marks a reply sent) fails
	diskInfo         // a write that stores a session's info fails
	diskChild        // a write that appends to a sub-agent's transcript fails
)

var errNoSpace = fmt.Errorf("write reef.db: %w", syscall.ENOSPC)

// fullDisk is a store whose writes fail as on a full disk. A failing write still runs
// against the real store (then rolls back), so the test sees what it tried.
type fullDisk struct {
	persistence.Store
	state  atomic.Int32
	filled atomic.Bool  // the disk filled up once: a rerun's answer does not fill it again
	closes atomic.Int32 // failed writes that closed inbox entries without recording a run
	marks  atomic.Int32 // failed writes that marked a reply sent
}

func (d *fullDisk) Update(fn func(persistence.Tx) error) error {
	state := d.state.Load()
	if state == diskOK {
		return d.Store.Update(fn)
	}
	return d.Store.Update(func(tx persistence.Tx) error {
		spy := &diskTx{Tx: tx, nearly: state == diskNearly, info: state == diskInfo, child: state == diskChild}
		err := fn(spy)
		if state == diskMark && spy.marked {
			d.marks.Add(1)
			return errNoSpace
		}
		if err != nil || state != diskFull {
			return err
		}
		if spy.deleted && !spy.appended {
			d.closes.Add(1)
		}
		return errNoSpace
	})
}

type diskTx struct {
	persistence.Tx
	nearly, info, child       bool
	appended, deleted, marked bool
}

func (t *diskTx) PutSession(info persistence.SessionInfo) error {
	if t.info {
		return errNoSpace
	}
	return t.Tx.PutSession(info)
}

func (t *diskTx) DeleteOutbox(key string, seq uint64) error {
	t.marked = true
	return t.Tx.DeleteOutbox(key, seq)
}

func (t *diskTx) AppendMessages(key string, msgs ...messages.ChatMessage) ([]uint64, error) {
	t.appended = true
	if t.nearly || t.child && subagent.IsKey(key) {
		return nil, errNoSpace
	}
	return t.Tx.AppendMessages(key, msgs...)
}

func (t *diskTx) DeleteInbox(key string, seq uint64) error {
	t.deleted = true
	return t.Tx.DeleteInbox(key, seq)
}

// diskRig runs gateways on one database behind a fullDisk; the model's answer to a message
// fills the disk when the message asks for it.
type diskRig struct {
	db    string
	disk  *fullDisk
	clock *testutil.Clock
}

func newDiskRig(t *testing.T) *diskRig {
	return &diskRig{db: filepath.Join(t.TempDir(), "reef.db"), disk: &fullDisk{},
		clock: testutil.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))}
}

func (r *diskRig) harness(t *testing.T) *harness {
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		text := lastUserText(lastUser(req))
		switch {
		case strings.HasPrefix(text, "fill") && r.disk.filled.CompareAndSwap(false, true):
			r.disk.state.Store(diskFull)
		case strings.HasPrefix(text, "nearly") && r.disk.filled.CompareAndSwap(false, true):
			r.disk.state.Store(diskNearly)
		case strings.HasPrefix(text, "mark") && r.disk.filled.CompareAndSwap(false, true):
			r.disk.state.Store(diskMark)
		}
		return fakellm.Reply{Text: "answer to " + text}
	}
	return newHarness(t, harnessOpts{script: script, dbPath: r.db, clock: r.clock,
		wrapStore: func(s persistence.Store) persistence.Store { r.disk.Store = s; return r.disk }})
}

// ticking advances the fake clock by step every 10 ms until stop is called. A retry's timer is
// armed a moment after the failure a test sees, and other timers (typing) are pending beside
// it, so a single Advance may come too early for it; ticking reaches it whenever it is armed.
func ticking(c *testutil.Clock, step time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
				c.Advance(step)
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

// check asserts the chat's inbox is empty and the database checks clean, after the harness stopped.
func (r *diskRig) check(t *testing.T, h *harness, chat string) {
	t.Helper()
	h.stop()
	st, err := bolt.Open(r.db, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("database check: %v", err)
	}
	st.View(func(rd persistence.Reader) error {
		in, _ := rd.Inbox(h.key(chat))
		out, _ := rd.Outbox(h.key(chat))
		if len(in) != 0 || len(out) != 0 {
			t.Errorf("inbox %d, outbox %d entries left, want none", len(in), len(out))
		}
		return nil
	})
}

// TestRunNotStoredIsClosed: the run's record does not fit but a small write does: the
// message is closed and the chat told to send it again, in one write; it is never answered,
// also not after a restart.
func TestRunNotStoredIsClosed(t *testing.T) {
	rig := newDiskRig(t)
	h := rig.harness(t)
	h.say("a", "nearly full")
	if out := h.reply(); !strings.Contains(out.Text, "could not save my answer") || !strings.Contains(out.Text, "send your message again") {
		t.Fatalf("sent %q, want the notice to send it again", out.Text)
	}
	rig.disk.state.Store(diskOK)
	h.stop()

	h = rig.harness(t)
	h.say("a", "again")
	if out := h.reply(); out.Text != "answer to again" {
		t.Fatalf("after the restart the chat got %q first, want only the answer to its new message", out.Text)
	}
	rig.check(t, h, "a")
}

// TestRunStoredWhenSpaceReturns: nothing can be written, not even the closing: the chat is
// told nothing, and the answer is recorded and sent once the disk has space again.
func TestRunStoredWhenSpaceReturns(t *testing.T) {
	rig := newDiskRig(t)
	h := rig.harness(t)
	h.say("a", "fill the disk")
	waitUntil(t, "the closing write to fail", func() bool { return rig.disk.closes.Load() >= 1 })
	stop := ticking(rig.clock, time.Second) // still full: the record and the closing fail again
	waitUntil(t, "a second retry", func() bool { return rig.disk.closes.Load() >= 2 })
	stop()
	rig.disk.state.Store(diskOK)
	stop = ticking(rig.clock, time.Second)
	out := h.reply()
	stop()
	if out.Text != "answer to fill the disk" {
		t.Fatalf("sent %q, want the answer once the disk had space", out.Text)
	}
	h.say("a", "next")
	if out := h.reply(); out.Text != "answer to next" {
		t.Fatalf("sent %q, want the answer to the next message (nothing twice)", out.Text)
	}
	rig.check(t, h, "a")
}

// TestRunNotStoredAcrossRestart: reef stops while nothing can be written; after the restart,
// with space again, the message is answered once and the chat never heard it failed.
func TestRunNotStoredAcrossRestart(t *testing.T) {
	rig := newDiskRig(t)
	h := rig.harness(t)
	h.say("a", "fill the disk")
	waitUntil(t, "the closing write to fail", func() bool { return rig.disk.closes.Load() >= 1 })
	h.stop()
	rig.disk.state.Store(diskOK)

	h = rig.harness(t)
	if out := h.reply(); out.Text != "answer to fill the disk" {
		t.Fatalf("after the restart the chat got %q, want the answer", out.Text)
	}
	h.say("a", "next")
	if out := h.reply(); out.Text != "answer to next" {
		t.Fatalf("sent %q, want the answer to the next message (nothing twice)", out.Text)
	}
	rig.check(t, h, "a")
}

// TestReplyMarkedWhenSpaceReturns: the reply went out but marking it sent fails; the mark is
// written once there is space, so a restart does not send the reply again.
func TestReplyMarkedWhenSpaceReturns(t *testing.T) {
	rig := newDiskRig(t)
	h := rig.harness(t)
	h.say("a", "mark my words")
	if out := h.reply(); out.Text != "answer to mark my words" {
		t.Fatalf("sent %q, want the answer", out.Text)
	}
	waitUntil(t, "the mark to fail", func() bool { return rig.disk.marks.Load() >= 1 })
	rig.disk.state.Store(diskOK)
	stop := ticking(rig.clock, time.Second)
	waitUntil(t, "the reply marked sent", func() bool {
		n := -1
		h.store.View(func(rd persistence.Reader) error {
			out, err := rd.Outbox(h.key("a"))
			n = len(out)
			return err
		})
		return n == 0
	})
	stop()
	h.stop()

	h = rig.harness(t)
	h.say("a", "next")
	if out := h.reply(); out.Text != "answer to next" {
		t.Fatalf("after the restart the chat got %q first, want the answer to its new message (nothing twice)", out.Text)
	}
	rig.check(t, h, "a")
}

// TestCommandNotStoredIsClosed: a command whose answer cannot be stored is closed with the
// notice in one write; a restart does not answer it again.
func TestCommandNotStoredIsClosed(t *testing.T) {
	rig := newDiskRig(t)
	h := rig.harness(t)
	rig.disk.state.Store(diskInfo)
	h.say("a", "/status")
	if out := h.reply(); !strings.Contains(out.Text, "could not save that") {
		t.Fatalf("sent %q, want the notice that it could not be saved", out.Text)
	}
	rig.disk.state.Store(diskOK)
	h.stop()

	h = rig.harness(t)
	h.say("a", "next")
	if out := h.reply(); out.Text != "answer to next" {
		t.Fatalf("after the restart the chat got %q first, want the answer to its new message", out.Text)
	}
	rig.check(t, h, "a")
}

// TestSubagentNotStoredFailsForParent: a sub-agent's final run cannot be stored, so its
// messages are closed instead; its parent still gets one completion, "failed", written with
// the closing, and answers the user once.
func TestSubagentNotStoredFailsForParent(t *testing.T) {
	rig := newDiskRig(t)
	script := fakellm.NewScript()
	script.Respond = func(req fakellm.Request) fakellm.Reply {
		switch {
		case isChild(req):
			rig.disk.state.Store(diskChild) // the child's record will not fit
			return fakellm.Reply{Text: "the child's answer"}
		case len(completions(req)) > 0:
			rig.disk.state.Store(diskOK)
			return fakellm.Reply{Text: "report: " + completions(req)[0]}
		case lastTool(req) == subagent.ToolSpawn:
			return fakellm.Reply{ToolCalls: []messages.ToolCall{call("y1", subagent.ToolYield, map[string]string{"message": "waiting"})}}
		}
		return fakellm.Reply{ToolCalls: []messages.ToolCall{call("s1", subagent.ToolSpawn, map[string]string{"task": "work", "label": "Worker"})}}
	}
	h := newHarness(t, harnessOpts{script: script, dbPath: rig.db, clock: rig.clock, extra: sessions.Tools(),
		wrapStore: func(s persistence.Store) persistence.Store { rig.disk.Store = s; return rig.disk }})
	h.say("a", "delegate")
	out := h.reply()
	if !strings.Contains(out.Text, "status: failed: could not save its run") {
		t.Fatalf("the user got %q, want the parent's report of a failed child", out.Text)
	}
	if n := strings.Count(out.Text, "[Internal event: a sub-agent finished"); n != 1 {
		t.Errorf("the report holds %d completions, want 1", n)
	}
	select {
	case out := <-h.ch.Sent:
		t.Errorf("a second message reached the user: %q", out.Text)
	case <-time.After(300 * time.Millisecond):
	}
	rig.check(t, h, "a")
}
