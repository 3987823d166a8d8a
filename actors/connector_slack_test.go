package actors_test

import (
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
)

// On a platform whose sends find themselves again after a crash (channels.OnceSender: Slack's
// message metadata), a reply that comes before its run is shown is one new message: no "…"
// draft is posted for it to be edited into (on Slack an edit is a Tier 3 chat.update, about
// 50 a minute for the whole workspace).
func TestOnceSenderQuickAnswerIsOnePost(t *testing.T) {
	srv := slacktest.New(t, slacktest.Config{})
	c := srv.Config()
	bot, err := slack.New(slack.Config{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: srv.APIURL,
		MediaClient: &http.Client{Timeout: 10 * time.Second}}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script := fakellm.NewScript()
	script.Add(fakellm.Reply{Text: "the answer"})
	reg, policy := actors.NoTools(t)
	store, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000}
	settings := plainDrafts("slack")
	s := settings["slack"]
	s.StartDelay = time.Hour // the run is never shown: what the reply does alone is tested
	settings["slack"] = s
	rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"slack": bot}, Streaming: settings,
		Retry: actors.OutboxRetry{First: 20 * time.Millisecond, Max: 100 * time.Millisecond, MaxAge: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	r := &platformRig{t: t, rt: rt, store: store}
	defer func() {
		if r.rt != nil {
			r.rt.Stop(10 * time.Second)
		}
	}()
	until(t, "the Socket Mode connection", func() bool { return srv.Connections() > 0 })
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
