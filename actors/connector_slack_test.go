package actors_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/streaming"
)

// slackRig is a gateway with a real Slack bot against the fake Slack, whose model answers
// every message with "the answer" once the gate is open; startDelay is the account's.
func slackRig(t *testing.T, startDelay time.Duration, gate chan struct{}) (*platformRig, *slacktest.Server) {
	t.Helper()
	srv := slacktest.New(t, slacktest.Config{})
	c := srv.Config()
	bot, err := slack.New(slack.Config{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: srv.APIURL,
		MediaClient: &http.Client{Timeout: 10 * time.Second}}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script := fakellm.NewScript()
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "the answer"} }
	reg, policy := actors.NoTools(t)
	store, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: &gated{Provider: fakellm.New(script), gate: gate}, Tools: reg, Policy: policy, ContextWindow: 128000}
	s := plainDrafts("slack")["slack"]
	s.StartDelay = startDelay
	rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"slack": bot}, Streaming: map[string]streaming.Settings{"slack": s},
		Retry: actors.OutboxRetry{First: 20 * time.Millisecond, Max: 100 * time.Millisecond, MaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	r := &platformRig{t: t, rt: rt, store: store, gate: gate}
	t.Cleanup(func() {
		if r.rt != nil {
			r.rt.Stop(10 * time.Second)
		}
		store.Close()
	})
	until(t, "the Socket Mode connection", func() bool { return srv.Connections() > 0 })
	return r, srv
}

// On a platform whose sends find themselves again after a crash (channels.OnceSender: Slack's
// message metadata), a reply that comes before its run is shown is one new message: no "…"
// draft is posted for it to be edited into (on Slack an edit is a Tier 3 chat.update, about
// 50 a minute for the whole workspace).
func TestOnceSenderQuickAnswerIsOnePost(t *testing.T) {
	open := make(chan struct{})
	close(open)
	r, srv := slackRig(t, time.Hour, open) // the run is never shown: what the reply does alone is tested
	srv.UserSays(t, "D1", "U1", "hi")
	until(t, "the answer", func() bool { got := srv.Sent("D1"); return len(got) == 1 && got[0] == "the answer" })
	r.outboxEmpty()
	if n, e := srv.Calls("chat.postMessage"), srv.Calls("chat.update"); n != 1 || e != 0 {
		t.Errorf("chat.postMessage %d, chat.update %d; want one post and no edit", n, e)
	}
	if m := srv.Messages("D1"); len(m) != 2 || m[1].Metadata == nil {
		t.Errorf("the DM holds %+v; want the answer with its metadata", m)
	}
}

// A burst of long runs on Slack shows drafts only as far as the account's edit rate can edit
// their answers soon (the drafts' bucket, connector_showbudget.go): the rest get no draft, and
// their answers are one message each, at once; every chat is answered once.
func TestOnceSenderDraftsWithinEditBudget(t *testing.T) {
	const chats = 30
	gate := make(chan struct{})
	r, srv := slackRig(t, 0, gate)
	for i := range chats {
		srv.UserSays(t, fmt.Sprintf("D%d", i), fmt.Sprintf("U%d", i), "hi") // a session each
	}
	drafts := func() int {
		n := 0
		for i := range chats {
			if got := srv.Sent(fmt.Sprintf("D%d", i)); len(got) == 1 && got[0] == "…" {
				n++
			}
		}
		return n
	}
	until(t, "the drafts", func() bool { return drafts() >= 20 })
	time.Sleep(slack.ShowAfter) // every run has been shown, or not, by now
	shown := drafts()
	close(gate)
	until(t, "every answer", func() bool {
		for i := range chats {
			if got := srv.Sent(fmt.Sprintf("D%d", i)); len(got) != 1 || got[0] != "the answer" {
				return false
			}
		}
		return true
	})
	r.outboxEmpty()
	if shown >= chats || shown < 20 {
		t.Errorf("%d of %d long runs showed a draft; want the bucket's 20 (and a few refilled), not all", shown, chats)
	}
	if e := srv.Calls("chat.update"); e != shown {
		t.Errorf("chat.update called %d times, want one per draft (%d)", e, shown)
	}
}
