package actors_test

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/memory"
)

// TestPassivationAtScale: 10,000 conversations each send one message and are answered; once
// idle for session.idleMinutes every Session and Turn actor is gone (the Router's map and the
// actor system's process registry); a message to one of them afterwards is answered by a
// respawned Session whose model request carries the earlier exchange.
func TestPassivationAtScale(t *testing.T) {
	const chats = 10_000
	r := newPassRig(t, memory.New())
	base := r.rt.Processes()
	r.touch(0, chats, 64)
	for i := range chats {
		want := []string{fmt.Sprintf("noted token-%d", i)}
		if got := r.chatReplies(strconv.Itoa(i)); !slices.Equal(got, want) {
			t.Fatalf("chat %d got %q, want %q", i, got, want)
		}
	}
	// SessionCounts, not LiveSessions: the Router answers after the 10,000 replies' backlog,
	// which under load can outlast LiveSessions' 5 s (it then reports -1).
	if live, _ := r.rt.SessionCounts(); live != chats {
		t.Fatalf("%d live sessions after every chat spoke, want %d", live, chats)
	}
	if p := r.rt.Processes(); p < base+chats {
		t.Fatalf("%d processes, want at least %d (one per Session)", p, base+chats)
	}

	rounds := r.passivateAll()
	t.Logf("passivated %d sessions in %d sweeps", chats, rounds)
	if p := r.rt.Processes(); p != base {
		t.Fatalf("%d processes after passivation, want %d as before any message", p, base)
	}

	if err := r.say("4242", "what was my token?"); err != nil {
		t.Fatal(err)
	}
	r.awaitReplies(1)
	if got, want := r.chatReplies("4242"), []string{"noted token-4242", "your token was token-4242"}; !slices.Equal(got, want) {
		t.Fatalf("chat 4242 got %q, want %q", got, want)
	}
	reqs := r.script.Requests()
	last := reqs[len(reqs)-1].Messages
	if len(last) != 3 || last[0].Role != messages.RoleUser || !strings.Contains(last[0].Content, "remember token-4242") ||
		last[1].Role != messages.RoleAssistant || last[1].Content != "noted token-4242" ||
		!strings.Contains(last[2].Content, "what was my token?") {
		t.Fatalf("the respawned session sent the model %+v, want the first exchange and the new message", last)
	}
	if live, _ := r.rt.SessionCounts(); live != 1 {
		t.Fatalf("%d live sessions after one message, want 1", live)
	}
}

// TestPassivationAfterRestart: a Session that panicked and was restarted by the Router (a
// fresh instance, which counts nothing it received before) still passivates when idle.
func TestPassivationAfterRestart(t *testing.T) {
	r := newPassRig(t, memory.New())
	var armed atomic.Bool
	armed.Store(true)
	crash := func() { // the first run's end panics inside the Session's Receive
		if calledFrom("actors.(*Session).onTurnFinished") && armed.CompareAndSwap(true, false) {
			panic("injected fault")
		}
	}
	r.onNow.Store(&crash)
	r.touch(1, 1, 1)
	if armed.Load() {
		t.Fatal("the fault was not injected")
	}
	if got, want := r.chatReplies("1"), []string{"noted token-1"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q: the restarted Session runs the message again from its inbox", got, want)
	}
	r.passivateAll()
	if err := r.say("1", "what was my token?"); err != nil {
		t.Fatal(err)
	}
	r.awaitReplies(1)
	if got := r.chatReplies("1"); len(got) != 2 || got[1] != "your token was token-1" {
		t.Fatalf("after respawn got %q", got)
	}
}

// calledFrom reports whether a function whose name ends in fn is on the caller's stack.
func calledFrom(fn string) bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}
