package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// setMeta rewrites reef_meta: value "" deletes the row.
func setMeta(t *testing.T, s *postgres.Store, name, value string) {
	t.Helper()
	ctx := context.Background()
	var err error
	if value == "" {
		_, err = s.Pool().Exec(ctx, "DELETE FROM reef_meta WHERE name = $1", name)
	} else {
		_, err = s.Pool().Exec(ctx, "UPDATE reef_meta SET value = $2 WHERE name = $1", name, value)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func meta(t *testing.T, url, name string) string {
	t.Helper()
	s := open(t, url)
	defer s.Close()
	var v string
	s.Pool().QueryRow(context.Background(), "SELECT value FROM reef_meta WHERE name = $1", name).Scan(&v)
	return v
}

// TestOpenUpgradesFormat1: a database in format 1 (no 'needs' row) is upgraded at open,
// keeping its records.
func TestOpenUpgradesFormat1(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	if err := s.Update(func(tx persistence.Tx) error {
		_, err := tx.AppendInbox("agent:main:x", messages.Inbound{Text: "kept"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	setMeta(t, s, "schema", "1")
	setMeta(t, s, "needs", "")
	s.Close()

	s = open(t, url)
	var inbox []persistence.InboxItem
	err := s.View(func(r persistence.Reader) error {
		var err error
		inbox, err = r.Inbox("agent:main:x")
		return err
	})
	s.Close()
	if err != nil || len(inbox) != 1 || inbox[0].Text != "kept" {
		t.Errorf("inbox after the upgrade = %+v, %v; want the entry kept", inbox, err)
	}
	if got, needs := meta(t, url, "schema"), meta(t, url, "needs"); got != "2" || needs != persistence.FormatRelease[2] {
		t.Errorf("reef_meta after the upgrade: schema %q, needs %q; want \"2\", %q", got, needs, persistence.FormatRelease[2])
	}
}

// TestOpenRefusesANewerFormat names the release the database says it needs.
func TestOpenRefusesANewerFormat(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	setMeta(t, s, "schema", "3")
	setMeta(t, s, "needs", "v9.4.0")
	s.Close()
	_, err := postgres.Open(context.Background(), url, postgres.Options{})
	fe, ok := errors.AsType[*persistence.FormatError](err)
	if !ok || fe.Format != 3 || !strings.Contains(err.Error(), "needs reef v9.4.0 or later") {
		t.Fatalf("Open = %v; want a FormatError for format 3 needing reef v9.4.0", err)
	}
	h, err := postgres.Check(context.Background(), url)
	if err != nil || len(h.Problems()) != 1 || !strings.Contains(h.Problems()[0], "store format 3") {
		t.Errorf("Check = %+v, %v, problems %q; want the format named", h, err, h.Problems())
	}
}
