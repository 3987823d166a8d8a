package telegram

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

func TestRunRefusedTokenIsErrAuth(t *testing.T) {
	s := telegramtest.NewWithToken(t, "999999:AAHsomeOtherTokenThatTheServerWants")
	b, _ := newTestBot(t, s, nil)
	_, done := run(t, b, newInbox().deliver)
	select {
	case err := <-done:
		if !errors.Is(err, channels.ErrAuth) {
			t.Errorf("Run = %v, want ErrAuth", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after getMe was refused")
	}
}

func TestRunConflictReturnsErrorAndLogsClearly(t *testing.T) {
	s := telegramtest.New(t)
	b, logs := newTestBot(t, s, nil)
	s.FailNext("getUpdates", 409, 0)
	_, done := run(t, b, newInbox().deliver)
	select {
	case err := <-done:
		if err == nil || errors.Is(err, channels.ErrAuth) || !contains(err.Error(), "conflict") {
			t.Errorf("Run = %v, want a conflict error the connector restarts after", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after 409 Conflict")
	}
	if !contains(logs.String(), "another getUpdates poller or a webhook is active") {
		t.Errorf("logs lack a clear conflict line:\n%s", logs)
	}
	if n := s.Calls("deleteWebhook"); n != 1 {
		t.Errorf("deleteWebhook called %d times, want once at start", n)
	}
}

func TestRunRetriesTransientPollErrorsThenGivesUp(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	s.FailNext("getUpdates", 500, 0)
	s.FailNext("getUpdates", 502, 0)
	s.FailNext("getUpdates", 429, 1)
	box := newInbox()
	_, done := run(t, b, box.deliver)
	s.UserSays(5, 5, "still there?")
	if got := box.next(t).Text; got != "still there?" {
		t.Errorf("got %q after transient errors", got)
	}
	for range b.timing.maxPollFailures {
		s.FailNext("getUpdates", 500, 0)
	}
	s.Drop() // release the poll in flight so the failures come now
	select {
	case err := <-done:
		if err == nil || errors.Is(err, channels.ErrAuth) {
			t.Errorf("Run = %v, want an error after repeated failures", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run kept going after repeated failures")
	}
}

// TestOffsetAdvancesOnlyAfterDeliver checks that an update deliver refused is delivered
// again, that the offset passes an update only once it was accepted, and that an accepted
// update is never delivered again, also to a new Bot (a restart).
func TestOffsetAdvancesOnlyAfterDeliver(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	box := newInbox()
	refusals := 0
	box.fail = func(in messages.Inbound) error {
		if in.Text == "two" && refusals < 2 {
			refusals++
			return errors.New("storage unavailable")
		}
		return nil
	}
	cancel, _ := run(t, b, box.deliver)
	first := s.UserSays(5, 5, "one")
	s.UserSays(5, 5, "two")
	last := s.UserSays(5, 5, "three")
	for _, want := range []string{"one", "two", "three"} {
		if got := box.next(t).Text; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if refusals != 2 {
		t.Errorf("deliver refused %d times, want 2", refusals)
	}
	eventually(t, "the last update is confirmed", func() bool { return s.Confirmed() == last+1 })
	if c := s.Confirmed(); c <= first {
		t.Errorf("confirmed offset %d, want past %d", c, first)
	}
	cancel()

	again, _ := newTestBot(t, s, nil)
	box2 := newInbox()
	run(t, again, box2.deliver)
	s.UserSays(5, 5, "four")
	if got := box2.next(t).Text; got != "four" {
		t.Errorf("after a restart got %q, want only the new message", got)
	}
	box.mu.Lock()
	defer box.mu.Unlock()
	seen := map[string]int{}
	for _, in := range box.got {
		seen[in.MessageID]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("message %s delivered %d times, want once", id, n)
		}
	}
}

func TestRunStopsPromptlyWhileDeliverBacksOff(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	b.timing.retryMin, b.timing.retryMax = time.Hour, time.Hour
	box := newInbox()
	refused := make(chan struct{}, 1)
	box.fail = func(messages.Inbound) error {
		select {
		case refused <- struct{}{}:
		default:
		}
		return errors.New("storage unavailable")
	}
	cancel, done := run(t, b, box.deliver)
	s.UserSays(5, 5, "hello")
	select {
	case <-refused:
	case <-time.After(10 * time.Second):
		t.Fatal("the update was not delivered")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop while backing off")
	}
	if s.Confirmed() != 0 {
		t.Errorf("confirmed offset %d, want nothing confirmed", s.Confirmed())
	}
}

// TestBatchDeliversChatsConcurrentlyInOrder: one batch with two chats; a refused update stops
// its own chat (its later updates wait for it) and the offset, while the other chat goes on.
// Updates after the refused one may be delivered twice (the connector drops duplicates by
// message id), but never out of order within their chat.
func TestBatchDeliversChatsConcurrentlyInOrder(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	box := newInbox()
	refused := false
	box.fail = func(in messages.Inbound) error {
		if in.Text == "a2" && !refused {
			refused = true
			return errors.New("storage unavailable")
		}
		return nil
	}
	for _, m := range []struct {
		chat int64
		text string
	}{{7, "a1"}, {8, "b1"}, {7, "a2"}, {8, "b2"}, {7, "a3"}} {
		s.UserSays(m.chat, m.chat, m.text)
	}
	run(t, b, box.deliver)
	seen := map[string]bool{}
	var order []string
	for len(seen) < 5 {
		in := box.next(t)
		if !seen[in.Text] {
			seen[in.Text] = true
			order = append(order, in.Text)
		}
	}
	pos := map[string]int{}
	for i, text := range order {
		pos[text] = i
	}
	if pos["a1"] > pos["a2"] || pos["a2"] > pos["a3"] || pos["b1"] > pos["b2"] {
		t.Errorf("first deliveries in order %v: a chat's messages are out of order", order)
	}
	if !refused {
		t.Error("the refusal was never exercised")
	}
}

// TestStartAsksGetMeAndDeleteWebhookAtOnce: before the first poll, getMe and deleteWebhook
// are in flight together, so a slow Telegram costs the start one round trip, not two; and
// the first getUpdates comes only after both.
func TestStartAsksGetMeAndDeleteWebhookAtOnce(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	hookAsked := make(chan struct{})
	var order []string
	var mu sync.Mutex
	alone := false // getMe's answer waited in vain for deleteWebhook
	s.OnCall(func(method string) {
		mu.Lock()
		order = append(order, method)
		mu.Unlock()
		switch method {
		case "deleteWebhook":
			close(hookAsked)
		case "getMe": // answer only once deleteWebhook has been asked too
			select {
			case <-hookAsked:
			case <-time.After(2 * time.Second):
				mu.Lock()
				alone = true
				mu.Unlock()
			}
		}
	})
	box := newInbox()
	run(t, b, box.deliver)
	s.UserSays(5, 5, "hello")
	if got := box.next(t).Text; got != "hello" {
		t.Fatalf("got %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if alone {
		t.Error("deleteWebhook was not asked while getMe was waiting for its answer")
	}
	if len(order) < 3 || order[2] != "getUpdates" || !slices.Contains(order[:2], "getMe") || !slices.Contains(order[:2], "deleteWebhook") {
		t.Fatalf("calls %v: want getMe and deleteWebhook (in any order), then getUpdates", order)
	}
	select {
	case <-hookAsked:
	default:
		t.Fatal("deleteWebhook never asked")
	}
}

// TestRunBatchesDeliversAPollAsOneBatch: RunBatches hands each getUpdates answer to
// DeliverAll in one call, without the updates reef ignores, and reads its errors back to the
// right updates: the offset stops at the refused one, which comes again at the head of the
// next batch.
func TestRunBatchesDeliversAPollAsOneBatch(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	s.UserSays(7, 7, "a1")
	s.Queue(telego.Update{Message: &telego.Message{MessageID: 99, Date: 1, Chat: telego.Chat{ID: 7, Type: "private"},
		From: &telego.User{ID: 5, IsBot: true, FirstName: "another bot"}, Text: "ignored"}})
	s.UserSays(8, 8, "b1")
	refusedID := s.UserSays(7, 7, "a2")
	s.UserSays(8, 8, "b2")

	batches := make(chan []string, 10)
	refused := false
	deliver := func(_ context.Context, ins []messages.Inbound) []error {
		errs := make([]error, len(ins))
		var texts []string
		for i, in := range ins {
			texts = append(texts, in.Text)
			if in.Text == "a2" && !refused {
				refused = true
				errs[i] = errors.New("storage unavailable")
			}
		}
		batches <- texts
		return errs
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.RunBatches(ctx, deliver) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	next := func() []string {
		t.Helper()
		select {
		case got := <-batches:
			return got
		case <-time.After(10 * time.Second):
			t.Fatal("no batch delivered in time")
			return nil
		}
	}
	if got, want := strings.Join(next(), " "), "a1 b1 a2 b2"; got != want {
		t.Fatalf("first batch %q, want %q (one call, the bot's message left out)", got, want)
	}
	if got, want := strings.Join(next(), " "), "a2 b2"; got != want {
		t.Fatalf("second batch %q, want %q: the refused update and those after it again", got, want)
	}
	eventually(t, "the offset passes every update", func() bool { return s.Pending() == 0 && s.Confirmed() > refusedID })
}

// TestReachableAfterEveryPollAnswer checks that OnReachable's function is called once getMe
// answered and once a getUpdates is answered again after failures, not for a failed poll; and
// that OnUnreachable's is called for each failed poll, with the status Telegram answered.
func TestReachableAfterEveryPollAnswer(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	s.Down(502, "getUpdates")
	reached := make(chan struct{}, 100)
	failed := make(chan error, 100)
	b.OnReachable(func() { reached <- struct{}{} })
	b.OnUnreachable(func(err error, _ time.Duration) { failed <- err })
	box := newInbox()
	run(t, b, box.deliver)
	select {
	case <-reached: // getMe answered
	case <-time.After(10 * time.Second):
		t.Fatal("no reachable after getMe answered")
	}
	select {
	case err := <-failed:
		var sc interface{ HTTPStatus() int }
		if !errors.As(err, &sc) || sc.HTTPStatus() != 502 {
			t.Errorf("unreachable with %v, want Telegram's 502", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no unreachable while getUpdates fails")
	}
	for s.Calls("getUpdates") < 2 {
		select {
		case <-reached:
			t.Fatal("reachable while getUpdates fails")
		case <-time.After(10 * time.Millisecond):
		}
	}
	s.Up()
	s.UserSays(5, 5, "back")
	select {
	case <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("no reachable after getUpdates answered")
	}
	if got := box.next(t).Text; got != "back" {
		t.Errorf("got %q", got)
	}
}
