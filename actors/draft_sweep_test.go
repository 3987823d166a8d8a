package actors_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// lossyBot is the Telegram channel of a process SIGKILLed in the instant after Telegram took
// a draft: once lose is set, the next draft's send reaches Telegram, but its answer does not
// reach reef, which "dies" (dies is called: the store takes no more writes); from then on
// every call fails, as nothing more leaves a dead process.
type lossyBot struct {
	*telegram.Bot
	lose, dead atomic.Bool
	loseEdit   atomic.Bool // the kill comes at the next edit instead (before it reaches Telegram)
	dies       func()
}

var errDead = errors.New("the process is gone")

func (b *lossyBot) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	if b.dead.Load() {
		return nil, errDead
	}
	ids, err := b.Bot.Send(ctx, out)
	if err == nil && strings.HasPrefix(out.SessionKey, "draft:") && b.lose.Load() {
		b.dead.Store(true)
		b.dies()
		return nil, errDead
	}
	return ids, err
}

func (b *lossyBot) Edit(ctx context.Context, chat, id, text string) error {
	if b.dead.Load() {
		return errDead
	}
	if b.loseEdit.Load() {
		b.dead.Store(true)
		b.dies()
		return errDead
	}
	return b.Bot.Edit(ctx, chat, id, text)
}

func (b *lossyBot) Delete(ctx context.Context, chat, id string) error {
	if b.dead.Load() {
		return errDead
	}
	return b.Bot.Delete(ctx, chat, id)
}

// startDraftGateway starts a gateway on dbPath with the draft journals in journals, its
// Telegram channel ch, answering with replies in order. stop stops it and closes its store.
func startDraftGateway(t *testing.T, ch channels.Channel, dbPath, journals string, wrap func(persistence.Store) persistence.Store, replies ...string) (stop func()) {
	t.Helper()
	return startDraftGatewayOn(t, nil, ch, dbPath, journals, wrap, replies...)
}

// startDraftGatewayOn is startDraftGateway with the Connector on clock (nil: the real one).
func startDraftGatewayOn(t *testing.T, clock actors.Clock, ch channels.Channel, dbPath, journals string, wrap func(persistence.Store) persistence.Store, replies ...string) (stop func()) {
	t.Helper()
	script := fakellm.NewScript()
	for _, text := range replies {
		script.Add(fakellm.Reply{Text: text})
	}
	reg, policy := actors.NoTools(t)
	store, err := bolt.Open(dbPath, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var seen persistence.Store = store
	if wrap != nil {
		seen = wrap(store)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: fakellm.New(script), Tools: reg, Policy: policy, ContextWindow: 128000}
	deps := &actors.Deps{Log: zerolog.New(io.Discard), Store: seen, Agents: []*actors.Agent{ag}, Journals: journals,
		Channels: map[string]channels.Channel{"telegram": ch}, Streaming: plainDrafts("telegram"), Clock: clock}
	rt, err := actors.Start(deps)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			rt.Stop(10 * time.Second)
			store.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestStrayDraftSweptAfterRestart: reef is killed in the instant after Telegram took the
// draft of a reply and before reef read its id, so nothing records that draft. After the
// restart the reply gets a new draft, and the one the kill left ("…", between the newest
// message reef knew in the chat and the new draft) is deleted; the user's messages in
// between are left alone, and no edit is refused by Telegram's per-chat limit. Before, the
// lost draft stayed in the chat for good.
func TestStrayDraftSweptAfterRestart(t *testing.T) {
	srv := telegramtest.New(t)
	srv.LimitEdits(time.Second)
	db, journals := filepath.Join(t.TempDir(), "reef.db"), t.TempDir()
	const chat = 42
	store := &killStore{kill: func(string, string, []byte) bool { return false }}
	bot := &lossyBot{Bot: telegramBot(t, srv), dies: func() { store.dead.Store(true) }}
	stop := startDraftGateway(t, bot, db, journals, store.wrapOnce(), "the answer 1", "the answer 2")
	srv.UserSays(chat, chat, "one")
	until(t, "the first answer", func() bool { return strings.Contains(strings.Join(srv.Sent(chat), "|"), "the answer 1") })
	bot.lose.Store(true)
	srv.UserSays(chat, chat, "two")
	until(t, "the kill", bot.dead.Load)
	stop()

	srv.LimitEdits(time.Second) // counted from here: the first process's pace is not the next one's
	startDraftGateway(t, telegramBot(t, srv), db, journals, nil)
	shown := func() []string {
		var out []string
		for _, m := range srv.Messages(chat) {
			if !m.Deleted {
				out = append(out, m.Text)
			}
		}
		return out
	}
	until(t, "the second answer", func() bool { return strings.Contains(strings.Join(shown(), "|"), "the answer 2") })
	until(t, "the stray draft deleted", func() bool { return !strings.Contains(strings.Join(shown(), "|"), "…") })
	if got := shown(); strings.Join(got, "|") != "the answer 1|the answer 2" {
		t.Errorf("the chat shows %q from the bot, want the two answers", got)
	}
	var ids []string
	for _, m := range srv.Messages(chat) {
		ids = append(ids, strconv.Itoa(m.MessageID))
	}
	if n := srv.RateLimited(); n > 0 {
		t.Errorf("%d edits refused by the per-chat limit", n)
	}
	t.Logf("bot messages %v", ids)
}

// TestStraySweepSurvivesKill: the restart after the lost draft is killed too, after its new
// draft was sent and recorded but before the sweep asked about anything. The sweep stays
// due in the draft's record, and the next start does it: the lost draft is deleted. Before,
// only the start that sent the new draft swept, and a kill in its sweep left the stray.
func TestStraySweepSurvivesKill(t *testing.T) {
	srv := telegramtest.New(t)
	db, journals := filepath.Join(t.TempDir(), "reef.db"), t.TempDir()
	const chat = 43
	store := &killStore{kill: func(string, string, []byte) bool { return false }}
	bot := &lossyBot{Bot: telegramBot(t, srv), dies: func() { store.dead.Store(true) }}
	stop := startDraftGateway(t, bot, db, journals, store.wrapOnce(), "the answer 1", "the answer 2")
	srv.UserSays(chat, chat, "one")
	until(t, "the first answer", func() bool { return strings.Contains(strings.Join(srv.Sent(chat), "|"), "the answer 1") })
	bot.lose.Store(true)
	srv.UserSays(chat, chat, "two")
	until(t, "the kill", bot.dead.Load)
	stop()

	store2 := &killStore{kill: func(string, string, []byte) bool { return false }}
	bot2 := &lossyBot{Bot: telegramBot(t, srv), dies: func() { store2.dead.Store(true) }}
	bot2.loseEdit.Store(true) // the sweep's first question, or the answer's edit
	stop = startDraftGateway(t, bot2, db, journals, store2.wrapOnce())
	until(t, "the second kill", bot2.dead.Load)
	stop()

	startDraftGateway(t, telegramBot(t, srv), db, journals, nil)
	shown := func() string {
		var out []string
		for _, m := range srv.Messages(chat) {
			if !m.Deleted {
				out = append(out, m.Text)
			}
		}
		return strings.Join(out, "|")
	}
	until(t, "the second answer", func() bool { return strings.Contains(shown(), "the answer 2") })
	until(t, "the stray drafts deleted", func() bool { return !strings.Contains(shown(), "…") })
	if got := shown(); got != "the answer 1|the answer 2" {
		t.Errorf("the chat shows %q from the bot, want the two answers", got)
	}
}
