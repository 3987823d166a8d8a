package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
)

func TestBacklogFoldsTextDeltasOneLinePerRun(t *testing.T) {
	var b backlog
	b.add(messages.RunEvent{Session: "a", Run: "r1", Seq: 1, Kind: messages.RunStart})
	for i, w := range []string{"Hel", "lo ", "there"} {
		b.add(messages.RunEvent{Session: "a", Run: "r1", Seq: uint64(2 + i), Kind: messages.RunTextDelta, Text: w})
		b.add(messages.RunEvent{Session: "b", Run: "r2", Seq: uint64(10 + i), Kind: messages.RunTextDelta, Text: fmt.Sprint(i)})
	}
	b.add(messages.RunEvent{Session: "a", Run: "r1", Seq: 20, Kind: messages.RunToolStart, Name: "ls"})
	b.add(messages.RunEvent{Session: "a", Run: "r1", Seq: 21, Kind: messages.RunTextDelta, Text: "!"})
	b.add(messages.RunEvent{Session: "a", Run: "r1", Seq: 22, Kind: messages.RunEnd})
	got := b.events("a", "")
	var kinds []string
	for _, ev := range got {
		kinds = append(kinds, string(ev.Kind)+":"+ev.Text)
	}
	if want := "run.start:|text.delta:Hello there!|tool.start:|run.end:"; strings.Join(kinds, "|") != want {
		t.Errorf("session a's backlog: %s, want %s", strings.Join(kinds, "|"), want)
	}
	if b := b.events("b", "text.delta"); len(b) != 1 || b[0].Text != "012" || b[0].Seq != 12 {
		t.Errorf("session b's text: %+v", b)
	}
	for i := 0; i < 2*backlogSize; i++ {
		b.add(messages.RunEvent{Session: "c", Run: fmt.Sprint(i), Kind: messages.RunEnd})
	}
	if n := len(b.events("", "")); n != backlogSize {
		t.Errorf("the backlog holds %d events, want at most %d", n, backlogSize)
	}
}

func TestLiveOpensWithTheBacklog(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.srv.back.follow(ctx, r.bus) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the backlog to subscribe", func() bool {
		r.bus.Publish(messages.RunEvent{Session: "s1", Run: "r0", Kind: messages.RunEnd})
		return len(r.srv.back.events("s1", "")) > 0
	})
	r.bus.Publish(messages.RunEvent{Session: "s1", Run: "r1", Kind: messages.RunTextDelta, Text: "key "})
	r.bus.Publish(messages.RunEvent{Session: "s1", Run: "r1", Kind: messages.RunTextDelta, Text: canary})
	r.bus.Publish(messages.RunEvent{Session: "s2", Run: "r2", Kind: messages.RunToolStart, Name: "other"})
	waitFor(t, "the backlog", func() bool { return len(r.srv.back.events("s2", "")) == 1 })
	s := r.stream(t, "/live/events?session=s1&kind=text.delta")
	ev, data := s.next(t)
	if ev != "run" || !strings.Contains(data, `"text":"key [redacted]"`) || strings.Contains(data, canary) {
		t.Errorf("the backlog's first event: %s %s", ev, data)
	}
	r.bus.Publish(messages.RunEvent{Session: "s1", Run: "r3", Kind: messages.RunEnd}) // another kind: not shown
	r.bus.Publish(messages.RunEvent{Session: "s1", Run: "r3", Kind: messages.RunTextDelta, Text: "new"})
	if ev, data := s.next(t); !strings.Contains(data, `"text":"new"`) {
		t.Errorf("the live event after the backlog: %s %s", ev, data)
	}
}
