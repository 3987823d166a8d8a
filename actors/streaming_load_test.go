package actors_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/streaming"
)

// threeTools is a model that calls read three times, one call per answer, then answers; each
// answer takes step.
type threeTools struct{ step time.Duration }

func (m threeTools) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	tools := 0
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != messages.RoleUser; i-- {
		if req.Messages[i].Role == messages.RoleTool {
			tools++
		}
	}
	reply := fakellm.Reply{Delay: m.step, Text: "All done."}
	if tools < 3 {
		reply = fakellm.Reply{Delay: m.step, ToolCalls: []messages.ToolCall{
			call("r"+strconv.Itoa(tools), "read", map[string]any{"path": fmt.Sprintf("part%d.txt", tools)})}}
	}
	return fakellm.New(fakellm.NewScript(reply)).Stream(ctx, req)
}

// loadChats is how many chats TestStreamingBurstUnderTelegramLimits runs at once (under
// -race on a shared machine); reef-bench -scenario streaming runs 1,000 (BENCHMARKS.md).
const loadChats = 200

// Many chats in progress mode, each a run with three tool calls and a model taking 2 s in
// all, against a Telegram that refuses (429) a chat's second edit within a second: no edit
// is refused, and every answer arrives, once, in place of its draft.
func TestStreamingBurstUnderTelegramLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("a burst of runs")
	}
	f, srv := telegramFake(t)
	srv.LimitEdits(time.Second)
	startStreamRig(t, f.name, f.bot, streaming.Defaults(), threeTools{step: 500 * time.Millisecond})
	for c := range loadChats {
		srv.UserSays(int64(1000+c), int64(1000+c), "collect the parts")
	}
	waitLong(t, "every answer", func() bool {
		for c := range loadChats {
			if !answered(srv, int64(1000+c)) {
				return false
			}
		}
		return true
	})
	if n := srv.RateLimited(); n != 0 {
		t.Errorf("%d edits were refused with 429, want none", n)
	}
	edits := 0
	for c := range loadChats {
		msgs := srv.Messages(int64(1000 + c))
		if len(msgs) != 1 || msgs[0].Text != "All done." {
			t.Fatalf("chat %d shows %+v, want one message: the answer", c, msgs)
		}
		edits += msgs[0].Edits
	}
	t.Logf("%d chats: %d edits (progress and answers), %d refused", loadChats, edits, srv.RateLimited())
}

// waitLong polls cond until it holds, for up to five minutes: a burst under -race on a
// loaded machine may take long; only a reef that loses answers never finishes.
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func answered(srv *telegramtest.Server, chat int64) bool {
	for _, m := range srv.Messages(chat) {
		if m.Text == "All done." {
			return true
		}
	}
	return false
}
