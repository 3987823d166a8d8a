package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// TestBackupUnderLoadAndRestore is issue #25's item 5 through the binary: `reef backup`,
// taken through the control socket while the gateway answers a stream of Telegram messages,
// writes a 0600 gzip copy (and the workspace as a .tar.gz) that `reef restore` (refused while
// the gateway runs) puts in place: the restored database passes the check and holds every
// message answered before the backup began. The gateway's automatic backups (backup.every
// 1s here) keep backup.keep files.
func TestBackupUnderLoadAndRestore(t *testing.T) {
	const chats, before, during, keep = 20, 60, 120, 2
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 5*time.Millisecond, nil)
	home, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+
		fmt.Sprintf("backup:\n  every: 1s\n  keep: %d\n", keep))
	g := launchGateway(t, e)

	// send sends n messages spread over the chats, each chat's one after another's reply.
	send := func(first, n int) (lost []string) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for c := range chats {
			chat := int64(2000 + c)
			wg.Go(func() {
				for i := first + c; i < first+n; i += chats {
					marker := tok(chat, i)
					tg.UserSays(chat, chat, "please answer "+marker)
					if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(chat), replyTo(marker)) }) {
						mu.Lock()
						lost = append(lost, marker)
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		return lost
	}
	if lost := send(0, before); len(lost) > 0 {
		t.Fatalf("no reply to %v before the backup:\n%s", lost, tail(g.stderr.String(), 40))
	}
	var answered []string // every message answered before the backup began
	for c := range chats {
		for i := c; i < before; i += chats {
			answered = append(answered, tok(int64(2000+c), i))
		}
	}

	load := make(chan []string)
	go func() { load <- send(before, during) }()
	out := filepath.Join(t.TempDir(), "manual.db.gz")
	res := reef(t, e, "", "backup", "-o", out, "--workspace", "-json")
	if res.code != 0 {
		t.Fatalf("reef backup under load = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var got backupResult
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || got.File != out || got.Bytes == 0 || got.Workspace == "" {
		t.Fatalf("reef backup -json printed %q (%v)", res.stdout, err)
	}
	mode0600(t, out)
	mode0600(t, got.Workspace)
	if names := tarNames(t, got.Workspace); !slices.Contains(names, "main/AGENTS.md") {
		t.Errorf("the workspace backup holds %v, want main/AGENTS.md", names)
	}

	if r := reef(t, e, "", "restore", out); r.code == 0 || !strings.Contains(r.stderr, "gateway") || !strings.Contains(r.stderr, "stop it first") {
		t.Errorf("reef restore while the gateway runs = %d, want a refusal\n%s%s", r.code, r.stdout, r.stderr)
	}
	if lost := <-load; len(lost) > 0 {
		t.Errorf("no reply to %v while the backup was taken", lost)
	}

	// Automatic backups: wait for more than keep of them, then stop (which waits for one in
	// progress) and count.
	autos := func() int { return strings.Count(g.stderr.String(), "automatic backup written") }
	if !eventually(time.Minute, func() bool { return autos() > keep+1 }) {
		t.Fatalf("%d automatic backups written in a minute with backup.every 1s:\n%s", autos(), tail(g.stderr.String(), 20))
	}
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	kept, _ := filepath.Glob(filepath.Join(home, "backups", "reef-auto-*.db.gz"))
	if len(kept) != keep {
		t.Errorf("%d automatic backups on disk after %d were written: %v, want backup.keep = %d", len(kept), autos(), kept, keep)
	}
	for _, p := range kept {
		mode0600(t, p)
	}

	r := reef(t, e, "", "restore", out)
	if r.code != 0 {
		t.Fatalf("reef restore = %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	aside, _ := filepath.Glob(filepath.Join(home, "data", "reef.db.before-restore-*"))
	if len(aside) != 1 || !strings.Contains(r.stdout, aside[0]) {
		t.Errorf("kept %v, want one reef.db.before-restore-<time> named in\n%s", aside, r.stdout)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(home, "data", "reef.db.restore-*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	missing := notStored(t, filepath.Join(home, "data", "reef.db"), answered)
	if len(missing) > 0 {
		t.Errorf("the restored database lacks %d of the %d messages answered before the backup: %v", len(missing), len(answered), missing)
	}
	if doc := reef(t, e, "", "doctor"); !strings.Contains(doc.stdout, "✓ database") {
		t.Errorf("reef doctor after the restore:\n%s%s", doc.stdout, doc.stderr)
	}
}

// TestRestoreRefusesABadBackup: a truncated backup is refused and the database is untouched.
func TestRestoreRefusesABadBackup(t *testing.T) {
	home := newHome(t)
	e := env{"REEF_HOME": home, "HOME": filepath.Dir(home)}
	db := filepath.Join(home, "data", "reef.db")
	fillConversations(t, db, 5)
	out := filepath.Join(home, "b.db.gz")
	if res := reef(t, e, "", "backup", "-o", out); res.code != 0 {
		t.Fatalf("offline reef backup = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	mode0600(t, out)
	raw := filepath.Join(home, "raw.db")
	unpackTo(t, out, raw)
	full, _ := os.ReadFile(raw)
	if err := os.WriteFile(raw, full[:len(full)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(db)
	r := reef(t, e, "", "restore", raw)
	if r.code == 0 || !strings.Contains(r.stderr, "not a usable backup") {
		t.Errorf("reef restore of a truncated copy = %d, want a refusal\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Error("a refused restore changed the database")
	}
	if left, _ := filepath.Glob(db + ".*"); len(left) > 0 {
		t.Errorf("a refused restore left %v", left)
	}
}

func mode0600(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
}

// tarNames lists the entries of the .tar.gz at path.
func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// unpackTo gunzips src to dst.
func unpackTo(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// notStored checks the database at path (bbolt's check must pass) and returns the markers
// that appear in no stored message or queued inbound message.
func notStored(t *testing.T, path string, markers []string) []string {
	t.Helper()
	st, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open the restored database: %v", err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("the restored database fails its check: %v", err)
	}
	var all strings.Builder
	if err := st.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, info := range infos {
			msgs, err := r.Messages(info.Key, 0)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				all.WriteString(m.Content + "\n")
			}
			inbox, err := r.Inbox(info.Key)
			if err != nil {
				return err
			}
			for _, in := range inbox {
				b, _ := json.Marshal(in)
				all.Write(b)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	text := all.String()
	var missing []string
	for _, m := range markers {
		if !strings.Contains(text, m+"\n") && !strings.Contains(text, m+" ") && !strings.Contains(text, m+`"`) && !strings.HasSuffix(text, m) {
			missing = append(missing, m)
		}
	}
	return missing
}

// TestRestoreReplacesAnEmptyDatabase: the way out of a refused empty reef.db that keeps the
// history is `reef restore`; the empty file is kept aside.
func TestRestoreReplacesAnEmptyDatabase(t *testing.T) {
	home := newHome(t)
	e := env{"REEF_HOME": home, "HOME": filepath.Dir(home)}
	db := filepath.Join(home, "data", "reef.db")
	fillConversations(t, db, 3)
	out := filepath.Join(home, "b.db.gz")
	if res := reef(t, e, "", "backup", "-o", out); res.code != 0 {
		t.Fatalf("reef backup = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if err := os.Truncate(db, 0); err != nil {
		t.Fatal(err)
	}
	if res := reef(t, e, "", "restore", "-json", out); res.code != 0 || !strings.Contains(res.stdout, `"kept":`) {
		t.Fatalf("reef restore over an empty database = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	list := reef(t, e, "", "sessions", "list")
	if list.code != 0 || strings.Count(list.stdout, "agent:main:telegram:direct:") != 3 {
		t.Errorf("reef sessions list after the restore = %d\n%s%s", list.code, list.stdout, list.stderr)
	}
}
