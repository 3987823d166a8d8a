package actors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
)

// TestChannelPauseResumeRestart: a paused channel receives nothing and says so in its
// health; resume and restart bring it back, and a message sent then is answered.
func TestChannelPauseResumeRestart(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	defer h.stop()
	h.say("c1", "hello")
	h.reply()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	state := func() actors.ChannelHealth {
		for _, hl := range h.rt.Health() {
			if hl.Name == "fake" {
				return hl
			}
		}
		t.Fatal("no fake channel in the health")
		return actors.ChannelHealth{}
	}
	if err := h.rt.ControlChannel(ctx, "fake", actors.ChannelPause); err != nil {
		t.Fatal(err)
	}
	if hl := state(); hl.State != actors.ChannelPaused || hl.Connected || !strings.Contains(hl.Describe(time.Now()), "paused") {
		t.Errorf("paused channel's health: %+v", hl)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	err := h.ch.Inject(short, messages.Inbound{ChatID: "c1", Text: "while paused"})
	stop()
	if err == nil {
		t.Error("a paused channel took a message")
	}
	for _, action := range []string{actors.ChannelResume, actors.ChannelRestart} {
		if err := h.rt.ControlChannel(ctx, "fake", action); err != nil {
			t.Fatal(err)
		}
		h.say("c1", "after "+action)
		if r := h.reply(); r.Text == "" {
			t.Errorf("no answer after %s", action)
		}
		if hl := state(); hl.State != actors.ChannelConnected || hl.Restarts == 0 {
			t.Errorf("after %s: %+v", action, hl)
		}
	}
	if err := h.rt.ControlChannel(ctx, "fake", "explode"); err == nil {
		t.Error("an unknown action was accepted")
	}
	if err := h.rt.ControlChannel(ctx, "nope", actors.ChannelPause); err == nil {
		t.Error("an unknown channel was accepted")
	}
}
