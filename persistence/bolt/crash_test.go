package bolt_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// crashEnv carries the database path to the helper process and marks it as one.
const crashEnv = "REEF_BOLT_CRASH_DB"

// commit is one Update the helper process reported as committed.
type commit struct {
	i       int
	key     string
	seq     uint64 // transcript entry appended
	inbox   uint64 // inbox item appended
	deleted uint64 // inbox item deleted, 0 if none
}

func (c commit) String() string {
	return fmt.Sprintf("committed %d %s %d %d %d", c.i, c.key, c.seq, c.inbox, c.deleted)
}

// TestCrashKeepsCommitted SIGKILLs a process in the middle of a stream of Updates and checks
// that the file passes Check and holds every Update the process saw committed.
func TestCrashKeepsCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	const want = 300
	path := filepath.Join(t.TempDir(), "reef.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var commits []commit
	timeout := time.After(60 * time.Second)
	for len(commits) < want {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("helper exited after %d commits; stderr:\n%s", len(commits), stderr.String())
			}
			if c, ok := parseCommit(t, line); ok {
				commits = append(commits, c)
			}
		case <-timeout:
			t.Fatalf("only %d commits in 60s; stderr:\n%s", len(commits), stderr.String())
		}
	}
	// While the helper holds the file, another process cannot open it.
	if s, err := bolt.Open(path, bolt.Options{}); !errors.Is(err, persistence.ErrLocked) {
		if err == nil {
			_ = s.Close()
		}
		t.Errorf("Open while another process holds the file = %v; want persistence.ErrLocked", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for line := range lines { // lines already written were committed too
		if c, ok := parseCommit(t, line); ok {
			commits = append(commits, c)
		}
	}
	_ = cmd.Wait()

	s := open(t, path)
	if err := s.Check(); err != nil {
		t.Fatalf("Check after SIGKILL: %v", err)
	}
	if err := s.View(func(r persistence.Reader) error { return checkCommits(t, r, commits) }); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d commits reported before SIGKILL, all present", len(commits))
}

func parseCommit(t *testing.T, line string) (commit, bool) {
	if !strings.HasPrefix(line, "committed ") {
		return commit{}, false
	}
	var c commit
	if _, err := fmt.Sscanf(line, "committed %d %s %d %d %d", &c.i, &c.key, &c.seq, &c.inbox, &c.deleted); err != nil {
		t.Fatalf("helper wrote %q: %v", line, err)
	}
	return c, true
}

// checkCommits checks that every reported commit's writes are in the store.
func checkCommits(t *testing.T, r persistence.Reader, commits []commit) error {
	inboxes := map[string]map[uint64]bool{}
	for _, c := range commits {
		msgs, err := r.Messages(c.key, c.seq-1)
		if err != nil {
			return err
		}
		if len(msgs) == 0 || msgs[0].Seq != c.seq || msgs[0].Content != fmt.Sprint("n=", c.i) {
			t.Errorf("commit %d: entry %s/%d missing or wrong: %+v", c.i, c.key, c.seq, msgs)
		}
		if seen, err := r.Seen(fmt.Sprint("crash:", c.i)); !seen || err != nil {
			t.Errorf("commit %d: dedup mark missing (%v)", c.i, err)
		}
		if inboxes[c.key] == nil {
			items, err := r.Inbox(c.key)
			if err != nil {
				return err
			}
			inboxes[c.key] = map[uint64]bool{}
			for _, it := range items {
				inboxes[c.key][it.Seq] = true
			}
		}
		if c.deleted != 0 && inboxes[c.key][c.deleted] {
			t.Errorf("commit %d: inbox %s/%d it deleted is back", c.i, c.key, c.deleted)
		}
	}
	return nil
}

// TestCrashHelperProcess is the process TestCrashKeepsCommitted kills: it commits Updates in
// a loop and prints each one after Update returns.
func TestCrashHelperProcess(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestCrashKeepsCommitted")
	}
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	last := map[string]uint64{}                 // key → last inbox seq
	deadline := time.Now().Add(2 * time.Minute) // in case the parent is gone
	for i := 0; time.Now().Before(deadline); i++ {
		c := commit{i: i, key: fmt.Sprintf("agent:main:crash:%d", i%4), deleted: last[fmt.Sprintf("agent:main:crash:%d", i%4)]}
		err := s.Update(func(tx persistence.Tx) error {
			seqs, err := tx.AppendMessages(c.key, messages.ChatMessage{Role: messages.RoleUser, Content: fmt.Sprint("n=", i)})
			if err != nil {
				return err
			}
			c.seq = seqs[0]
			if c.inbox, err = tx.AppendInbox(c.key, messages.Inbound{Text: strings.Repeat("x", i%3000)}); err != nil {
				return err
			}
			if c.deleted != 0 {
				if err := tx.DeleteInbox(c.key, c.deleted); err != nil {
					return err
				}
			}
			_, err = tx.MarkSeen(fmt.Sprint("crash:", i), time.Now())
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		last[c.key] = c.inbox
		fmt.Println(c)
	}
	os.Exit(3)
}
