package actors_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/streaming"
)

// platformRig is a gateway with one real Discord or Feishu bot against its fake, and a model
// whose answers wait for the test (gate).
type platformRig struct {
	t     *testing.T
	rt    *actors.Runtime
	store *bolt.Store
	gate  chan struct{}
}

func startPlatformRig(t *testing.T, name string, ch channels.Channel, replies ...string) *platformRig {
	t.Helper()
	r := &platformRig{t: t, gate: make(chan struct{})}
	script := fakellm.NewScript()
	for _, text := range replies {
		script.Add(fakellm.Reply{Text: text})
	}
	reg, policy := actors.NoTools(t)
	var err error
	if r.store, err = bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{}); err != nil {
		t.Fatal(err)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: &gated{Provider: fakellm.New(script), gate: r.gate}, Tools: reg, Policy: policy, ContextWindow: 128000}
	deps := &actors.Deps{Log: testutil.Logger(t), Store: r.store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{name: ch}, Streaming: plainDrafts(name),
		Retry: actors.OutboxRetry{First: 20 * time.Millisecond, Max: 100 * time.Millisecond, MaxAge: time.Hour}}
	if r.rt, err = actors.Start(deps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.rt != nil {
			r.rt.Stop(10 * time.Second)
		}
		r.store.Close()
	})
	return r
}

// plainDrafts are the default streaming settings without a label: a run's draft shows "…"
// until it has lines to show (the tests of drafts as such).
func plainDrafts(names ...string) map[string]streaming.Settings {
	out := map[string]streaming.Settings{}
	for _, n := range names {
		s := streaming.Defaults()
		s.Label = ""
		out[n] = s
	}
	return out
}

// until polls cond (bounded) until it holds.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// outboxEmpty stops the gateway and checks that no reply is left to send.
func (r *platformRig) outboxEmpty() {
	r.t.Helper()
	if err := r.rt.Stop(10 * time.Second); err != nil {
		r.t.Error(err)
	}
	r.rt = nil
	err := r.store.View(func(rd persistence.Reader) error {
		keys, err := rd.PendingSessions()
		for _, k := range keys {
			out, _ := rd.Outbox(k)
			r.t.Errorf("session %s still has %d replies in the outbox", k, len(out))
		}
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

func feishuRig(t *testing.T, cfg feishutest.Config, replies ...string) (*platformRig, *feishutest.Server) {
	t.Helper()
	srv := feishutest.New(t, cfg)
	bot, err := feishu.New(srv.BotConfig(), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	r := startPlatformRig(t, "feishu", bot, replies...)
	until(t, "the long connection", srv.Connected)
	return r, srv
}

// A draft Feishu will not let the bot edit (recalled, edited 20 times, past the edit window)
// does not hold the answer back: the answer goes out as a new message, once, the draft is
// recalled, and nothing stays in the outbox (#24 bug 1).
func TestFeishuUneditableDraft(t *testing.T) {
	for name, spoil := range map[string]func(*feishutest.Server, string){
		"recalled":        func(s *feishutest.Server, id string) { s.Recall(id) },
		"edited 20 times": func(s *feishutest.Server, id string) { s.SetEdits(id, feishutest.MaxEdits) },
		"too old to edit": func(s *feishutest.Server, id string) { s.Age(id, 2*time.Hour) },
	} {
		t.Run(name, func(t *testing.T) {
			r, srv := feishuRig(t, feishutest.Config{EditWindow: time.Hour}, "the answer")
			srv.UserSays("oc_dm", "ou_alice", "hi")
			var draft string
			until(t, "the draft", func() bool {
				for _, m := range srv.Messages() {
					if m.Text == "…" {
						draft = m.ID
					}
				}
				return draft != ""
			})
			spoil(srv, draft)
			close(r.gate)
			until(t, "the answer", func() bool {
				return strings.Join(srv.Sent("oc_dm"), "|") != "" && feishuHas(srv.Messages(), "the answer")
			})
			r.outboxEmpty()
			var answers int
			for _, m := range srv.Messages() {
				if m.Text == "the answer" {
					answers++
				}
				if m.ID == draft && !m.Recalled && name != "recalled" {
					t.Errorf("the draft %s was left in the chat: %+v", draft, m)
				}
			}
			if answers != 1 {
				t.Errorf("the answer was sent %d times, want once; chat: %+v", answers, srv.Messages())
			}
			if got := srv.Sent("oc_dm"); len(got) != 1 || got[0] != "the answer" {
				t.Errorf("the chat shows %q, want only the answer", got)
			}
		})
	}
}

func feishuHas(ms []feishutest.SentMessage, text string) bool {
	for _, m := range ms {
		if m.Text == text {
			return true
		}
	}
	return false
}

// An answer too long for one message replaces its draft on Feishu too: the "…" is recalled,
// not left above the answer (#24 bug 5).
func TestFeishuLongAnswerRecallsDraft(t *testing.T) {
	long := strings.Repeat("many words here ", 400) // past the draft's 1900 characters
	r, srv := feishuRig(t, feishutest.Config{}, long)
	srv.UserSays("oc_dm", "ou_alice", "hi")
	until(t, "the draft", func() bool { return feishuHas(srv.Messages(), "…") })
	close(r.gate)
	until(t, "the answer", func() bool { return len(srv.Sent("oc_dm")) > 0 && srv.Sent("oc_dm")[0] != "…" })
	r.outboxEmpty()
	if got := srv.Sent("oc_dm"); strings.Join(got, "") != strings.TrimSpace(long) && strings.Join(got, "") != long {
		t.Errorf("the chat shows %d messages starting %.40q, want only the answer", len(got), got)
	}
}

func discordRig(t *testing.T, replies ...string) (*platformRig, *discordtest.Server) {
	t.Helper()
	srv := discordtest.New(t, discordtest.Config{})
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	r := startPlatformRig(t, "discord", bot, replies...)
	until(t, "the gateway session", srv.Connected)
	return r, srv
}

// An answer too long for one message replaces its draft on Discord: the "…" is deleted, not
// left above the answer (#24 bug 5).
func TestDiscordLongAnswerDeletesDraft(t *testing.T) {
	long := strings.Repeat("many words here ", 200) // 3200 characters: two messages
	r, srv := discordRig(t, long)
	srv.UserSays(t, "dm1", "7", "hi")
	until(t, "the draft", func() bool { return len(srv.Sent("dm1")) == 1 })
	close(r.gate)
	until(t, "the answer", func() bool { return len(srv.Deleted("dm1")) == 1 && len(srv.Sent("dm1")) == 2 })
	r.outboxEmpty()
	if got := strings.Join(srv.Sent("dm1"), ""); strings.TrimSpace(got) != strings.TrimSpace(long) {
		t.Errorf("the channel shows %.60q…, want only the answer", got)
	}
}

// A run in a thread shows typing in the thread, where the conversation is, not in its parent
// channel (#24 bug 6).
func TestDiscordTypingInThread(t *testing.T) {
	r, srv := discordRig(t, "the answer")
	srv.ThreadMessage(t, "g1", "parent", "thread", "7", "<@"+srv.BotID()+"> hi")
	until(t, "typing", func() bool { return srv.Typing("thread") > 0 || srv.Typing("parent") > 0 })
	close(r.gate)
	until(t, "the answer", func() bool { return len(srv.Sent("thread")) == 1 })
	r.outboxEmpty()
	if srv.Typing("parent") != 0 || srv.Typing("thread") == 0 {
		t.Errorf("typing shown %d× in the parent, %d× in the thread; want the thread only", srv.Typing("parent"), srv.Typing("thread"))
	}
}
