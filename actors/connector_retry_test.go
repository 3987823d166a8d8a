package actors_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// gated is a provider whose calls wait until the test opens the gate: the run goes on long
// enough to get its draft.
type gated struct {
	providers.Provider
	gate chan struct{}
}

func (g *gated) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Provider.Stream(ctx, req)
}

// outageRig is a gateway with a real Telegram bot against the fake Bot API.
type outageRig struct {
	t     *testing.T
	srv   *telegramtest.Server
	rt    *actors.Runtime
	store *bolt.Store
	gate  chan struct{}
	sent  chan telegramtest.SentMessage // every message sent or edited
	calls chan string                   // every Bot API method called
	// parked gets a value when the Connector logs that a reply stays in the outbox: it gave
	// up trying for now (before the outbox drained by itself, after four tries in 7 s); and
	// when it recorded a dead letter.
	parked chan struct{}
}

func newOutageRig(t *testing.T, retry actors.OutboxRetry, replies ...string) *outageRig {
	t.Helper()
	return startOutageRig(t, retry, telegramtest.New(t), filepath.Join(t.TempDir(), "reef.db"), replies...)
}

// startOutageRig starts a gateway on the database at dbPath, against srv.
func startOutageRig(t *testing.T, retry actors.OutboxRetry, srv *telegramtest.Server, dbPath string, replies ...string) *outageRig {
	t.Helper()
	r := &outageRig{t: t, srv: srv, gate: make(chan struct{}),
		sent: make(chan telegramtest.SentMessage, 100), calls: make(chan string, 1000), parked: make(chan struct{}, 100)}
	srv.OnSend(func(m telegramtest.SentMessage) { r.sent <- m })
	srv.OnCall(func(method string) {
		select {
		case r.calls <- method:
		default:
		}
	})
	bot := telegramBot(t, srv)
	script := fakellm.NewScript()
	for _, text := range replies {
		script.Add(fakellm.Reply{Text: text})
	}
	reg, policy := actors.NoTools(t)
	var err error
	if r.store, err = bolt.Open(dbPath, bolt.Options{}); err != nil {
		t.Fatal(err)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: &gated{Provider: fakellm.New(script), gate: r.gate}, Tools: reg, Policy: policy, ContextWindow: 128000}
	log := testutil.Logger(t)
	if !testing.Verbose() { // the Nop logger calls no hook
		log = zerolog.New(io.Discard).Level(zerolog.WarnLevel)
	}
	log = log.Hook(zerolog.HookFunc(func(_ *zerolog.Event, _ zerolog.Level, msg string) {
		if strings.Contains(msg, "stays in the outbox") || strings.Contains(msg, "dead letter") {
			select {
			case r.parked <- struct{}{}:
			default:
			}
		}
	}))
	deps := &actors.Deps{Log: log, Store: r.store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"telegram": bot}, Retry: retry, Streaming: plainDrafts("telegram")}
	if r.rt, err = actors.Start(deps); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	return r
}

// stop shuts the gateway down (replies in flight finish and their rows are cleared) and
// closes the store.
func (r *outageRig) stop() {
	if r.rt == nil {
		return
	}
	if err := r.rt.Stop(10 * time.Second); err != nil {
		r.t.Error(err)
	}
	r.rt = nil
}

// waitSent waits until the fake records a message of chat with text (edited when edited).
func (r *outageRig) waitSent(text string, edited bool) telegramtest.SentMessage {
	r.t.Helper()
	for {
		m := testutil.Receive(r.t, r.sent)
		if m.Text == text && (m.Edits > 0) == edited {
			return m
		}
	}
}

// waitCalls waits until method was called n more times.
func (r *outageRig) waitCalls(method string, n int) {
	r.t.Helper()
	for n > 0 {
		if testutil.Receive(r.t, r.calls) == method {
			n--
		}
	}
}

// settled stops the gateway and checks what the chat shows and that nothing is left to send.
func (r *outageRig) settled(chat int64, want ...string) {
	r.t.Helper()
	r.stop()
	defer r.store.Close()
	msgs := r.srv.Messages(chat)
	var got []string
	for _, m := range msgs {
		if !m.Deleted {
			got = append(got, m.Text)
		}
	}
	if len(got) != len(want) {
		r.t.Fatalf("chat shows %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			r.t.Errorf("message %d is %q, want %q", i, got[i], want[i])
		}
	}
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

// While Telegram refuses sendMessage and editMessageText, the reply waits in the outbox and
// is tried again with backoff; when Telegram is back it replaces its draft, without a
// restart, once.
func TestConnectorOutboxDrainsAfterOutage(t *testing.T) {
	r := newOutageRig(t, actors.OutboxRetry{First: 20 * time.Millisecond, Max: 100 * time.Millisecond, MaxAge: time.Hour},
		"the answer")
	r.srv.UserSays(42, 42, "hi")
	draft := r.waitSent("…", false) // the run is still going: it got its draft
	r.srv.Down(502, "sendMessage", "editMessageText", "deleteMessage")
	close(r.gate)
	r.waitCalls("editMessageText", 4) // the first try and three retries, all refused
	if got := r.srv.Messages(42); len(got) != 1 || got[0].Text != "…" {
		t.Fatalf("during the outage the chat shows %+v, want only the draft", got)
	}
	r.srv.Up()
	m := r.waitSent("the answer", true)
	if m.MessageID != draft.MessageID {
		t.Errorf("the reply edited message %d, want the draft %d", m.MessageID, draft.MessageID)
	}
	r.settled(42, "the answer")
}

// A reply waiting for the platform goes out as soon as its chat writes again, before the
// answer to the new message.
func TestConnectorOutboxFlushedWhenChatWrites(t *testing.T) {
	// The backoff is long: only the chat's new message can send the reply in this test.
	r := newOutageRig(t, actors.OutboxRetry{First: time.Hour, MaxAge: 2 * time.Hour}, "the answer", "second answer")
	r.srv.UserSays(42, 42, "hi")
	draft := r.waitSent("…", false)
	r.srv.Down(500, "sendMessage", "editMessageText", "deleteMessage")
	close(r.gate)
	testutil.Receive(t, r.parked)
	r.srv.Up()
	r.srv.UserSays(42, 42, "are you there?")
	m := r.waitSent("the answer", true)
	if m.MessageID != draft.MessageID {
		t.Errorf("the reply edited message %d, want the draft %d", m.MessageID, draft.MessageID)
	}
	r.waitSent("second answer", true)
	r.settled(42, "the answer", "second answer")
}

// A reply still waiting when reef stops is sent once after the restart, into its draft.
func TestConnectorOutboxSentOnceAfterRestart(t *testing.T) {
	long := actors.OutboxRetry{First: time.Hour, MaxAge: 2 * time.Hour}
	srv := telegramtest.New(t)
	db := filepath.Join(t.TempDir(), "reef.db")
	r := startOutageRig(t, long, srv, db, "the answer")
	srv.UserSays(42, 42, "hi")
	draft := r.waitSent("…", false)
	srv.Down(502, "sendMessage", "editMessageText", "deleteMessage")
	close(r.gate)
	testutil.Receive(t, r.parked)
	r.stop() // tries the waiting reply once more, in vain: it stays in the outbox
	if err := r.store.Close(); err != nil {
		t.Fatal(err)
	}
	srv.Up()
	r = startOutageRig(t, long, srv, db)
	m := r.waitSent("the answer", true)
	if m.MessageID != draft.MessageID {
		t.Errorf("the reply edited message %d, want the draft %d", m.MessageID, draft.MessageID)
	}
	r.settled(42, "the answer")
	if m := srv.Messages(42)[0]; m.Edits != 1 {
		t.Errorf("the draft was edited %d times, want once", m.Edits)
	}
}

// A reply the platform refuses for longer than MaxAge is set aside as a dead letter, and
// the chat's later replies go on.
func TestConnectorOutboxDeadReply(t *testing.T) {
	r := newOutageRig(t, actors.OutboxRetry{First: 10 * time.Millisecond, Max: 20 * time.Millisecond, MaxAge: 60 * time.Millisecond},
		"lost answer", "second answer")
	r.srv.UserSays(42, 42, "hi")
	r.waitSent("…", false)
	r.srv.Down(502, "sendMessage", "editMessageText") // the run's end deletes the draft
	close(r.gate)
	for len(r.deadReplies()) == 0 {
		testutil.Receive(t, r.parked) // each failure is logged, and the dead letter once recorded
	}
	r.srv.Up()
	r.srv.UserSays(42, 42, "again")
	r.waitSent("second answer", true)
	dead := r.deadReplies()
	r.settled(42, "second answer")
	if len(dead) != 1 || dead[0].Outbound.Text != "lost answer" || dead[0].OutboxSeq == 0 {
		t.Errorf("dead replies %+v, want the lost answer", dead)
	}
}

func (r *outageRig) deadReplies() []actors.DeadReply {
	r.t.Helper()
	var dead []actors.DeadReply
	err := r.store.View(func(rd persistence.Reader) error {
		var err error
		dead, err = actors.ListDeadReplies(rd)
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return dead
}

// After a long outage of the whole Bot API (getUpdates too), a waiting reply goes out once
// the API answers again, although its own backoff has grown long: the poller's first answer
// tries the waiting chats again.
func TestConnectorOutboxSentWhenAPIBack(t *testing.T) {
	r := newOutageRig(t, actors.OutboxRetry{First: time.Hour, MaxAge: 2 * time.Hour}, "the answer")
	r.srv.UserSays(42, 42, "hi")
	draft := r.waitSent("…", false)
	r.srv.Down(502, "sendMessage", "editMessageText", "deleteMessage", "getUpdates", "getMe")
	close(r.gate)
	testutil.Receive(t, r.parked)
	r.waitCalls("getUpdates", 2) // the poller fails too
	r.srv.Up()
	m := r.waitSent("the answer", true)
	if m.MessageID != draft.MessageID {
		t.Errorf("the reply edited message %d, want the draft %d", m.MessageID, draft.MessageID)
	}
	r.settled(42, "the answer")
}
