package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers/fake"
)

// TestEmptyDatabaseIsRefused is issue #25's item 4 through the binary: an existing zero-length
// reef.db stops `reef chat`, `reef gateway` and `reef doctor` with an explanation instead of
// starting over without a word; `reef init --fresh` moves it aside and creates a new one.
func TestEmptyDatabaseIsRefused(t *testing.T) {
	llm := newFake(t, fake.Reply{Text: "hello fresh"})
	home := newHome(t)
	e := withFake(home, llm)
	db := filepath.Join(home, "data", "reef.db")
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"chat"}, {"gateway"}, {"sessions", "list"}} {
		res := reef(t, e, "hi\n", args...)
		cmd := "reef " + strings.Join(args, " ")
		if res.code == 0 || !strings.Contains(res.stderr, "exists but is empty") || !strings.Contains(res.stderr, "reef init --fresh") {
			t.Errorf("%s = %d, want a refusal that explains the empty file and how to go on\nstdout:\n%s\nstderr:\n%s",
				cmd, res.code, res.stdout, res.stderr)
		}
		if fi, err := os.Stat(db); err != nil || fi.Size() != 0 {
			t.Fatalf("%s changed the empty file: %v %v", cmd, fi, err)
		}
	}
	doc := reef(t, e, "", "doctor")
	if doc.code == 0 || !strings.Contains(doc.stdout, "✗ database:") || !strings.Contains(doc.stdout, "reef init --fresh") {
		t.Errorf("reef doctor = %d, want it to report the empty database\n%s%s", doc.code, doc.stdout, doc.stderr)
	}

	fresh := reef(t, e, "", "init", "--fresh")
	if fresh.code != 0 {
		t.Fatalf("reef init --fresh = %d\n%s%s", fresh.code, fresh.stdout, fresh.stderr)
	}
	kept, _ := filepath.Glob(db + ".empty-*")
	if len(kept) != 1 || !strings.Contains(fresh.stdout, kept[0]) {
		t.Fatalf("kept %v, want one reef.db.empty-<time> named in the output:\n%s", kept, fresh.stdout)
	}
	if chat := reef(t, e, "hi\n", "chat"); chat.code != 0 || !strings.Contains(chat.stdout, "hello fresh") {
		t.Errorf("reef chat after init --fresh = %d\n%s%s", chat.code, chat.stdout, chat.stderr)
	}
	// A database that holds data is not replaced by --fresh.
	again := reef(t, e, "", "init", "--fresh")
	if again.code == 0 || !strings.Contains(again.stderr, "holds data") {
		t.Errorf("reef init --fresh on a database with data = %d, want a refusal\n%s%s", again.code, again.stdout, again.stderr)
	}
	checkDatabase(t, home)
}
