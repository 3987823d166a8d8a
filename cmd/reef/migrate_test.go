package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// storeDump is everything a store holds, read through persistence.Reader.
type storeDump struct {
	Sessions []persistence.SessionInfo
	Pending  []string
	Messages map[string][]persistence.Entry
	Snaps    map[string][]persistence.Snapshot
	Inbox    map[string][]persistence.InboxItem
	Outbox   map[string][]persistence.OutboxItem
	Seen     map[string]bool
	KV       map[string]string
}

func dumpStore(t *testing.T, s persistence.Store, keys, ids, buckets []string) storeDump {
	t.Helper()
	d := storeDump{Messages: map[string][]persistence.Entry{}, Snaps: map[string][]persistence.Snapshot{},
		Inbox: map[string][]persistence.InboxItem{}, Outbox: map[string][]persistence.OutboxItem{}, Seen: map[string]bool{}, KV: map[string]string{}}
	err := s.View(func(r persistence.Reader) error {
		var err error
		if d.Sessions, err = r.Sessions(); err != nil {
			return err
		}
		if d.Pending, err = r.PendingSessions(); err != nil {
			return err
		}
		for _, k := range keys {
			if d.Messages[k], err = r.Messages(k, 0); err != nil {
				return err
			}
			if d.Snaps[k], err = r.Snapshots(k); err != nil {
				return err
			}
			if d.Inbox[k], err = r.Inbox(k); err != nil {
				return err
			}
			if d.Outbox[k], err = r.Outbox(k); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if d.Seen[id], err = r.Seen(id); err != nil {
				return err
			}
		}
		for _, b := range buckets {
			err := r.Scan(b, "", func(k string, v []byte) error { d.KV[b+" "+k] = string(v); return nil })
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestMigrateToPostgres copies a bbolt database with every kind of record into PostgreSQL:
// the copy reads back the same through persistence.Reader, and sessions go on with the seqs
// they had (an inbox whose last rows were deleted does not hand their seqs out again).
func TestMigrateToPostgres(t *testing.T) {
	url := pgtest.URL(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "reef.db")
	src, err := bolt.Open(db, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	keys := []string{"agent:main:telegram:direct:42", "agent:main:discord:group:7", "no-info", "x\x00y"}
	err = src.Update(func(tx persistence.Tx) error {
		for i, k := range keys {
			if k != "no-info" {
				if err := tx.PutSession(persistence.SessionInfo{Key: k, AgentID: "main", Created: now, Turns: i}); err != nil {
					return err
				}
			}
			seqs, err := tx.AppendMessages(k, messages.ChatMessage{Role: messages.RoleUser, Content: "hi " + k, Time: now},
				messages.ChatMessage{Role: messages.RoleAssistant, Content: "hello", Time: now})
			if err != nil {
				return err
			}
			if err := tx.PutSnapshot(k, persistence.Snapshot{Seq: seqs[0], Summary: "sum", Created: now}); err != nil {
				return err
			}
			for range 3 {
				if _, err := tx.AppendInbox(k, messages.Inbound{Channel: "telegram", ChatID: "42", Text: "q", Time: now}); err != nil {
					return err
				}
				if _, err := tx.AppendOutbox(k, messages.Outbound{Channel: "telegram", ChatID: "42", Text: "a"}); err != nil {
					return err
				}
			}
			if err := tx.DeleteInbox(k, 3); err != nil { // the last one: its seq must not come back
				return err
			}
		}
		if _, err := tx.MarkSeen("telegram:1", now); err != nil {
			return err
		}
		for _, kv := range [][3]string{{"cron/jobs", "daily", `{"every":"24h"}`}, {"pairing", "code1", "{}"}, {"cron", "top", "1"}} {
			if err := tx.Put(kv[0], kv[1], []byte(kv[2])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	buckets, ids := []string{"cron/jobs", "pairing", "cron"}, []string{"telegram:1", "telegram:2"}
	want := dumpStore(t, src, keys, ids, buckets)
	src.Close()

	res, err := migrateToPostgres(db, filepath.Join(dir, "backups"), url)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(res.Backup); err != nil || fi.Size() == 0 {
		t.Errorf("no backup at %s: %v", res.Backup, err)
	}
	if res.Copied[persistence.RecordSession] != 4 || res.Copied[persistence.RecordMessage] != 8 || res.Copied[persistence.RecordKV] != 3 {
		t.Errorf("copied %v; want 4 sessions, 8 entries, 3 kv records", res.Copied)
	}
	dst, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if d := cmp.Diff(want, dumpStore(t, dst, keys, ids, buckets), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the copy differs (-bolt +postgres):\n%s", d)
	}
	err = dst.Update(func(tx persistence.Tx) error {
		in, err := tx.AppendInbox(keys[0], messages.Inbound{Text: "next"})
		if err != nil {
			return err
		}
		seqs, err := tx.AppendMessages(keys[0], messages.ChatMessage{Role: messages.RoleUser, Content: "next"})
		if in != 4 || len(seqs) != 1 || seqs[0] != 3 {
			t.Errorf("after the copy: next inbox seq %d, next entry seqs %v; want 4 and [3]", in, seqs)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Again into the same database: refused, nothing changed.
	if _, err := migrateToPostgres(db, filepath.Join(dir, "backups"), url); err == nil || !strings.Contains(err.Error(), "already holds reef data") {
		t.Errorf("second migration = %v; want a refusal", err)
	}
}

// TestDoctorPostgres: reef doctor's database check on PostgreSQL names the version and the
// schema, and fails with a fix when the server cannot be reached.
func TestDoctorPostgres(t *testing.T) {
	url := pgtest.URL(t)
	var out strings.Builder
	d := &doctor{out: &out}
	cfg := &configs.Config{DataDir: t.TempDir(), Storage: configs.StorageConfig{Driver: "postgres", URL: url}}
	d.checkDataDir(cfg)
	if d.problems != 0 || !strings.Contains(out.String(), "✓ database: PostgreSQL 1") || !strings.Contains(out.String(), "no reef tables yet") {
		t.Errorf("doctor on a fresh database said:\n%s", out.String())
	}
	out.Reset()
	cfg.Storage.URL = "postgres://reef:pw-doctor-canary@127.0.0.1:1/reef?connect_timeout=5"
	d.checkDataDir(cfg)
	if d.problems != 1 || !strings.Contains(out.String(), "✗ database: PostgreSQL (storage.url) cannot be reached") ||
		strings.Contains(out.String(), "pw-doctor-canary") {
		t.Errorf("doctor on an unreachable database said:\n%s", out.String())
	}
}
