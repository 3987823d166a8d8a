package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
)

// TestSessionsExportARealChat exports what `reef chat` stored, a tool call and a /new
// included, and checks the export against the database.
func TestSessionsExportARealChat(t *testing.T) {
	srv := newFake(t,
		fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "write", Arguments: `{"path":"hi.txt","content":"hi"}`}}},
		fake.Reply{Text: "I wrote hi.txt."},
		fake.Reply{Text: "Hi, I am back. What next?"}, // the greeting after /new
		fake.Reply{Text: "Hello again, fresh start!"})
	home := newHome(t)
	e := withFake(home, srv)
	if res := reef(t, e, "please write hi to hi.txt\n/new\nhello again\n", "chat"); res.code != 0 {
		t.Fatalf("chat = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var rows []sessionRow
	if res := reef(t, e, "", "sessions", "list", "-json"); json.Unmarshal([]byte(res.stdout), &rows) != nil || len(rows) != 1 {
		t.Fatalf("list -json after a chat = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	key := rows[0].Key
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var stored []persistence.Entry
	var snaps []persistence.Snapshot
	err = st.View(func(r persistence.Reader) (err error) {
		if stored, err = r.Messages(key, 0); err != nil {
			return err
		}
		snaps, err = r.Snapshots(key)
		return err
	})
	st.Close()
	if err != nil || len(snaps) != 1 || snaps[0].Kind != persistence.SnapshotReset {
		t.Fatalf("stored snapshots %+v, %v; want one reset", snaps, err)
	}

	jsonl := reef(t, e, "", "sessions", "export", key)
	var n int
	for _, line := range strings.Split(strings.TrimSpace(jsonl.stdout), "\n") {
		var v struct{ Type string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		if v.Type == "message" {
			n++
		}
	}
	if n != len(stored) || n < 6 {
		t.Errorf("export has %d messages; the database holds %d (want at least 6)", n, len(stored))
	}
	md := reef(t, e, "", "sessions", "export", key, "-format", "md").stdout
	at := 0
	for _, want := range []string{"please write hi to hi.txt", "**→ write**", "## Tool result: write", "I wrote hi.txt.",
		"**" + markNewSession + "**", "Hi, I am back. What next?", "hello again", "Hello again, fresh start!"} {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("markdown lacks %q after byte %d:\n%s", want, at, md)
		}
		at += i + len(want)
	}
	noCanary(t, home, srv, jsonl.stdout, md)
}
