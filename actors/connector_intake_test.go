package actors_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// inboxStore records, for each committed transaction, the texts it appended to inboxes, and
// fails the appends of texts that fail names (while fail returns true).
type inboxStore struct {
	persistence.Store
	mu      sync.Mutex
	commits [][]string
	fail    func(text string) bool
}

func (s *inboxStore) Update(fn func(persistence.Tx) error) error {
	tx := &inboxTx{store: s}
	err := s.Store.Update(func(t persistence.Tx) error {
		tx.Tx, tx.texts = t, nil
		return fn(tx)
	})
	if err == nil && len(tx.texts) > 0 {
		s.mu.Lock()
		s.commits = append(s.commits, tx.texts)
		s.mu.Unlock()
	}
	return err
}

func (s *inboxStore) inboxCommits() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.commits...)
}

type inboxTx struct {
	persistence.Tx
	store *inboxStore
	texts []string
}

func (t *inboxTx) AppendInbox(key string, in messages.Inbound) (uint64, error) {
	if f := t.store.fail; f != nil && f(in.Text) {
		return 0, errors.New("disk says no")
	}
	t.texts = append(t.texts, in.Text)
	return t.Tx.AppendInbox(key, in)
}

func injectBatch(t *testing.T, h *harness, ins []messages.Inbound) []error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Timeout)
	defer cancel()
	errs, err := h.ch.InjectBatch(ctx, ins)
	if err != nil {
		t.Fatal(err)
	}
	return errs
}

// TestBatchAcceptedInOneCommit: a platform batch (a Telegram getUpdates answer) reaches the
// inboxes in one transaction, each chat's messages in order, and every chat is answered.
func TestBatchAcceptedInOneCommit(t *testing.T) {
	store := &inboxStore{}
	h := newHarness(t, harnessOpts{wrapStore: func(s persistence.Store) persistence.Store { store.Store = s; return store }})
	var ins []messages.Inbound
	for i := range 3 {
		for chat := range 10 {
			ins = append(ins, messages.Inbound{ChatID: fmt.Sprint("c", chat), Text: fmt.Sprintf("c%d-%d", chat, i)})
		}
	}
	for i, err := range injectBatch(t, h, ins) {
		if err != nil {
			t.Fatalf("message %d refused: %v", i, err)
		}
	}
	commits := store.inboxCommits()
	if len(commits) != 1 || len(commits[0]) != len(ins) {
		t.Fatalf("inbox commits %v, want the %d messages in one", commits, len(ins))
	}
	for i, text := range commits[0] {
		if text != ins[i].Text {
			t.Fatalf("inbox order %v, want the batch's order", commits[0])
		}
	}
	answered := map[string]bool{}
	for len(answered) < 10 {
		answered[h.reply().ChatID] = true
	}
}

// TestBatchRefusalHoldsBackOnlyItsChat: when one message cannot be stored, the batch's write
// fails and each message is written on its own: the others are accepted, the refused message
// gets its error and its chat's later message is not attempted, so the platform delivers both
// again, in order. Delivered again, the accepted ones are dropped as duplicates.
func TestBatchRefusalHoldsBackOnlyItsChat(t *testing.T) {
	var broken sync.Mutex
	failing := true
	store := &inboxStore{fail: func(text string) bool {
		broken.Lock()
		defer broken.Unlock()
		return failing && text == "a2"
	}}
	script := fakellm.NewScript()
	script.Respond = func(r fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "got " + lastUser(r)} }
	h := newHarness(t, harnessOpts{script: script, wrapStore: func(s persistence.Store) persistence.Store { store.Store = s; return store }})
	ins := []messages.Inbound{
		{ChatID: "a", Text: "a1", MessageID: "a:1"}, {ChatID: "b", Text: "b1", MessageID: "b:1"},
		{ChatID: "a", Text: "a2", MessageID: "a:2"}, {ChatID: "b", Text: "b2", MessageID: "b:2"},
		{ChatID: "a", Text: "a3", MessageID: "a:3"},
	}
	errs := injectBatch(t, h, ins)
	for i, want := range []string{"", "", "disk says no", "", channels.ErrNotAttempted.Error()} {
		got := ""
		if errs[i] != nil {
			got = errs[i].Error()
		}
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("message %s: error %q, want %q", ins[i].Text, got, want)
		}
	}

	broken.Lock()
	failing = false
	broken.Unlock()
	for i, err := range injectBatch(t, h, ins) { // the platform's redelivery from the refused offset
		if err != nil {
			t.Fatalf("redelivered message %s refused: %v", ins[i].Text, err)
		}
	}
	var stored []string
	for _, c := range store.inboxCommits() {
		stored = append(stored, c...)
	}
	if got, want := strings.Join(stored, " "), "a1 b1 b2 a2 a3"; got != want {
		t.Errorf("stored in the inboxes %q, want %q: each message once, a chat's in order", got, want)
	}
}
