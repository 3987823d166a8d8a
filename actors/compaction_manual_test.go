package actors_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// TestManualCompact: /compact summarizes all but the recent messages with the user's
// instructions, answers with one line and no model reply, and the next run uses the summary.
func TestManualCompact(t *testing.T) {
	model := &compactModel{}
	script := fakellm.NewScript()
	script.Respond = model.respond
	h := newHarness(t, harnessOpts{script: script})

	h.say("1", "/compact")
	if out := h.reply(); !strings.HasPrefix(out.Text, "Nothing to compact yet") {
		t.Errorf("/compact of an empty conversation = %q", out.Text)
	}
	// 4 turns of ~7000 tokens (inbound text is capped at 32 KiB): the last two are kept.
	h.say("1", filler("TURN-1 my project id is "+projectID+".", 7000))
	h.reply()
	for turn := 2; turn <= 4; turn++ {
		h.say("1", filler(fmt.Sprintf("TURN-%d", turn), 7000))
		h.reply()
	}
	n := len(script.Requests())
	h.say("1", "/compact keep the project id")
	out := h.reply()
	t.Logf("/compact: %s", out.Text)
	if !strings.HasPrefix(out.Text, "Compacted: ") || !strings.Contains(out.Text, "messages summarized, context ~") ||
		!strings.HasSuffix(out.Text, "of 128k tokens.") {
		t.Fatalf("/compact reply = %q", out.Text)
	}
	reqs := script.Requests()[n:]
	if len(reqs) != 1 || !isSummaryCall(reqs[0]) {
		t.Fatalf("/compact made %d requests, want one summary call", len(reqs))
	}
	if !strings.Contains(reqs[0].System, "keep the project id") {
		t.Error("the summary call lacks the /compact instructions")
	}
	if !requestHas(reqs[0], "TURN-2") || requestHas(reqs[0], "TURN-3") || requestHas(reqs[0], "TURN-4") {
		t.Error("the summary call does not carry exactly the turns before the recent ~20k tokens")
	}
	for _, e := range h.transcript("1") {
		if strings.Contains(e.Content, "/compact") {
			t.Errorf("the command reached the transcript: %q", e.Content)
		}
	}
	if info := sessionInfo(t, h, h.key("1")); info.Turns != 4 {
		t.Errorf("turns = %d after 4 runs and two /compact, want 4", info.Turns)
	}
	var inbox []persistence.InboxItem
	if err := h.store.View(func(r persistence.Reader) (err error) { inbox, err = r.Inbox(h.key("1")); return err }); err != nil || len(inbox) != 0 {
		t.Errorf("inbox = %v, %v; want the command removed", inbox, err)
	}
	h.say("1", "and now?")
	h.reply()
	last := script.Requests()[len(script.Requests())-1]
	if s, ok := summaryIn(last); !ok || !strings.Contains(s, projectID) {
		t.Errorf("the run after /compact has no summary with the project id: %q, %v", s, ok)
	}
	if requestHas(last, "TURN-1 ") || !requestHas(last, "TURN-4") {
		t.Errorf("the run after /compact does not hold the kept turns only")
	}
}

// TestResetSnapshotStartsAfresh: a "reset" snapshot (/new) hides everything before it and adds
// no summary; a compaction summary stored earlier is not shown either.
func TestResetSnapshotStartsAfresh(t *testing.T) {
	script := fakellm.NewScript()
	dbPath := filepath.Join(t.TempDir(), "reef.db")
	h := newHarness(t, harnessOpts{script: script, dbPath: dbPath})
	h.say("1", "old message "+projectID)
	h.reply()
	h.say("1", "another old message")
	h.reply()
	h.stop()

	h2 := newHarness(t, harnessOpts{script: script, dbPath: dbPath})
	key := h2.key("1")
	err := h2.store.Update(func(tx persistence.Tx) error {
		if err := tx.PutSnapshot(key, persistence.Snapshot{Seq: 1, Summary: "old summary " + projectID}); err != nil {
			return err
		}
		entries, err := tx.Messages(key, 0)
		if err != nil {
			return err
		}
		return tx.PutSnapshot(key, persistence.Snapshot{Seq: entries[len(entries)-1].Seq, Kind: "reset"})
	})
	if err != nil {
		t.Fatal(err)
	}
	n := len(script.Requests())
	h2.say("1", "fresh start")
	h2.reply()
	r := script.Requests()[n]
	if len(r.Messages) != 1 || !requestHas(r, "fresh start") {
		t.Fatalf("after a reset the request holds %d messages, want only the new one", len(r.Messages))
	}
	if _, ok := summaryIn(r); ok || requestHas(r, projectID) {
		t.Error("after a reset the request still shows the earlier conversation")
	}
}

// TestManualCompactWaitsForTheRun: /compact during a run is queued like a run: the run ends
// and answers first, then the compaction runs and answers.
func TestManualCompactWaitsForTheRun(t *testing.T) {
	slow, started, release := heldTool("lookup", "found")
	model := &compactModel{}
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply {
		if last := r.Messages[len(r.Messages)-1]; last.Role == messages.RoleTool {
			return fakellm.Reply{Text: "the run's answer"}
		}
		return model.respond(r)
	}
	h := newHarness(t, harnessOpts{script: script, extra: []tools.Tool{slow}})
	for turn := 1; turn <= 4; turn++ {
		h.say("1", filler(fmt.Sprintf("TURN-%d", turn), 7000))
		h.reply()
	}
	h.say("1", "please look it up")
	testutil.Receive(t, started)
	h.say("1", "/compact")
	h.say("1", "/status") // answered at once; by then the Session has taken /compact in
	if out := h.reply(); !strings.HasPrefix(out.Text, "Session: ") {
		t.Fatalf("reply during the run = %q, want the /status answer", out.Text)
	}
	for _, r := range script.Requests() {
		if isSummaryCall(r) {
			t.Fatal("/compact started while a run was active")
		}
	}
	close(release)
	if out := h.reply(); out.Text != "the run's answer" {
		t.Fatalf("first reply after the tool = %q, want the run's answer", out.Text)
	}
	if out := h.reply(); !strings.HasPrefix(out.Text, "Compacted: ") {
		t.Fatalf("second reply = %q, want the compaction's line", out.Text)
	}
	reqs := script.Requests()
	if !isSummaryCall(reqs[len(reqs)-1]) {
		t.Error("the last request is not the compaction's summary call")
	}
}
