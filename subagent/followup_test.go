package subagent

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
)

// TestFollowUp: a follow-up is counted in the child's link; a child that ended runs again,
// out of the archive schedule; an archived one is refused. PendingFollowUps finds the
// parent's follow-ups in the child's inbox and nothing else.
func TestFollowUp(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	store := memory.New()
	parent, child := "agent:main:fake:direct:42", "agent:main:subagent:U"
	l := &Link{Child: child, Parent: parent, RunID: "U", Mode: "session", Status: messages.SubagentCompleted,
		Created: now.Add(-time.Hour), Ended: now.Add(-time.Minute), ArchiveAfter: time.Hour, Runs: 1}
	update := func(fn func(tx persistence.Tx) error) {
		t.Helper()
		if err := store.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	var pending []uint64
	update(func(tx persistence.Tx) error {
		if err := ScheduleArchive(tx, l); err != nil {
			return err
		}
		if err := Put(tx, l); err != nil {
			return err
		}
		tx.AppendInbox(child, messages.Inbound{System: true, Source: "session:agent:main:fake:direct:7", Text: "from another session"})
		tx.AppendInbox(child, messages.Inbound{System: true, Source: FollowUpSource(parent) + "|reply:R", Text: "a send that waits"})
		seq, _ := tx.AppendInbox(child, messages.Inbound{System: true, Source: FollowUpSource(parent), Text: "more work"})
		pending = append(pending, seq)
		return nil
	})
	var got Link
	update(func(tx persistence.Tx) error {
		var err error
		got, err = FollowUp(tx, child, now)
		return err
	})
	if got.FollowUps != 1 || got.Status != messages.SubagentRunning || !got.Ended.IsZero() || !got.ArchiveDue.IsZero() || !got.RunStarted.Equal(now) {
		t.Errorf("after a follow-up to a child that ended: %+v", got)
	}
	update(func(tx persistence.Tx) error {
		if archived, _, err := Archive(tx, now.Add(2*time.Hour), 10); err != nil || len(archived) != 0 {
			t.Errorf("archive pass took %d children (%v), want none: the child runs again", len(archived), err)
		}
		got, _ = FollowUp(tx, child, now) // to a child still working: counted, nothing else
		seqs, err := PendingFollowUps(tx, &got)
		if !slices.Equal(seqs, pending) {
			t.Errorf("PendingFollowUps = %v, want %v (the parent's follow-ups only)", seqs, pending)
		}
		return err
	})
	if got.FollowUps != 2 || got.Status != messages.SubagentRunning {
		t.Errorf("after a second follow-up: %+v", got)
	}
	run := Link{Child: child, Parent: parent, Mode: "run"}
	store.View(func(r persistence.Reader) error {
		if seqs, _ := PendingFollowUps(r, &run); len(seqs) != 0 {
			t.Errorf("a child of mode run has follow-ups %v", seqs)
		}
		return nil
	})
	err := store.Update(func(tx persistence.Tx) error {
		l, _, _ := Get(tx, child)
		l.Status, l.Archived = messages.SubagentCompleted, now
		if err := Put(tx, &l); err != nil {
			return err
		}
		_, err := FollowUp(tx, child, now)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "archived") {
		t.Errorf("a follow-up to an archived child: %v, want refused", err)
	}
}
