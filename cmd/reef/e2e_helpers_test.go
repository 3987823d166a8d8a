package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// Helpers of the end-to-end channel tests: a `reef gateway` child that can be killed and
// restarted on the same REEF_HOME, a fake model that echoes the message it answers, and
// bounded polling.

// e2eLife bounds one gateway process of an end-to-end test (the race detector makes the
// child slow on 2 cores; the tests themselves finish far sooner).
const e2eLife = 4 * time.Minute

// e2eReady bounds the wait for "reef gateway ready".
const e2eReady = 30 * time.Second

// launchGateway starts `reef gateway` and waits until it logs that it is ready. It is
// startGateway with the bounds of the end-to-end tests.
func launchGateway(t *testing.T, e env) *gateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eLife)
	g := &gateway{cmd: command(ctx, e, "gateway"), stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	g.cmd.Stdout, g.cmd.Stderr = g.stdout, g.stderr
	if err := g.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		g.err = g.cmd.Wait()
		cancel()
		close(g.exited)
	}()
	t.Cleanup(func() {
		g.cmd.Process.Kill()
		<-g.exited
	})
	deadline := time.Now().Add(e2eReady)
	for !strings.Contains(g.stderr.String(), "reef gateway ready") {
		select {
		case <-g.exited:
			t.Fatalf("reef gateway exited before it was ready (%v):\n%s", g.err, g.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("reef gateway not ready after %v:\n%s", e2eReady, g.stderr)
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the child's log
	}
	return g
}

// node is a gateway on one REEF_HOME across kills and restarts.
type node struct {
	t     *testing.T
	env   env
	mu    sync.Mutex
	cur   *gateway
	lives []*gateway
	kills int
}

func newNode(t *testing.T, e env) *node {
	n := &node{t: t, env: e}
	n.start()
	return n
}

// start launches a new gateway process and waits until it is ready.
func (n *node) start() {
	n.t.Helper()
	g := launchGateway(n.t, n.env)
	n.mu.Lock()
	n.cur = g
	n.lives = append(n.lives, g)
	n.mu.Unlock()
}

// kill SIGKILLs the running gateway and waits until it is gone.
func (n *node) kill() {
	n.t.Helper()
	n.mu.Lock()
	g := n.cur
	n.mu.Unlock()
	if err := g.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		n.t.Fatalf("kill: %v", err)
	}
	select {
	case <-g.exited:
	case <-time.After(20 * time.Second):
		n.t.Fatal("reef gateway still running 20s after SIGKILL")
	}
	n.mu.Lock()
	n.kills++
	n.mu.Unlock()
}

// restart kills the gateway and starts a new one on the same home.
func (n *node) restart() {
	n.t.Helper()
	n.kill()
	n.start()
}

// stop ends the running gateway with SIGTERM and fails unless it exits 0 and says stopped.
func (n *node) stop() {
	n.t.Helper()
	n.mu.Lock()
	g := n.cur
	n.mu.Unlock()
	if code := g.stop(n.t, syscall.SIGTERM); code != 0 {
		n.t.Fatalf("reef gateway exit code %d after SIGTERM, want 0; stderr:\n%s", code, tail(g.stderr.String(), 4000))
	}
	if !strings.Contains(g.stderr.String(), `"stopped"`) {
		n.t.Errorf("reef gateway did not log that it stopped:\n%s", tail(g.stderr.String(), 4000))
	}
}

// logs returns the stderr of every process the node ran, oldest first.
func (n *node) logs() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for i, g := range n.lives {
		fmt.Fprintf(&b, "--- gateway process %d ---\n%s", i+1, g.stderr.String())
	}
	return b.String()
}

// tail returns the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}

// writeConfig writes reef.yaml into a new REEF_HOME and returns the environment of a reef
// using it with the fake model srv.
func writeConfig(t *testing.T, srv *openaitest.Server, yaml string) (string, env) {
	t.Helper()
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, withFake(home, srv)
}

// freeAddr returns a loopback address with a port nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// eventually polls cond every few milliseconds until it holds or timeout passes, and
// reports whether it held.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(15 * time.Millisecond) // bounded polling of a fake's record
	}
}

// tokenRE matches the unique marker every test message carries, e.g. "tok-12-3".
var tokenRE = regexp.MustCompile(`tok-[0-9a-z]+-[0-9]+`)

// tok is the marker of message i of chat.
func tok(chat any, i int) string { return fmt.Sprintf("tok-%v-%d", chat, i) }

// replyTo is what the echo model answers to a message carrying marker.
func replyTo(marker string) string { return "reply to " + marker }

// echoLLM is a fake model that answers "reply to <marker>" for the newest marker in the
// last user message, after a random delay of up to maxDelay. slow, when set, gives the delay
// for the first request about a marker (to hold a run open while the test kills reef).
type echoLLM struct {
	srv *openaitest.Server

	mu     sync.Mutex
	asked  map[string]int // marker → requests answering it
	slow   func(marker string) time.Duration
	noMark int // requests without a marker
}

func newEchoLLM(t *testing.T, maxDelay time.Duration, slow func(string) time.Duration) *echoLLM {
	t.Helper()
	l := &echoLLM{asked: map[string]int{}, slow: slow}
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		marks := tokenRE.FindAllString(lastUser(req), -1)
		delay := time.Duration(0)
		if maxDelay > 0 {
			delay = rand.N(maxDelay + 1)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if len(marks) == 0 {
			l.noMark++
			return fake.Reply{Text: "ok", Delay: delay}
		}
		m := marks[len(marks)-1]
		l.asked[m]++
		if l.slow != nil && l.asked[m] == 1 {
			if d := l.slow(m); d > 0 {
				delay = d
			}
		}
		return fake.Reply{Text: replyTo(m), Delay: delay}
	}
	l.srv = openaitest.NewServer(script)
	t.Cleanup(l.srv.Close)
	return l
}

// requests returns how many requests asked about marker.
func (l *echoLLM) requests(marker string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.asked[marker]
}

// total returns how many requests the model served.
func (l *echoLLM) total() int { return len(l.srv.Script().Requests()) }

// checkSettled opens the database of home after the gateway stopped: it must pass bbolt's
// check and hold no unanswered message and no unsent reply.
func checkSettled(t *testing.T, home string) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatalf("open the database after shutdown: %v", err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("database check: %v", err)
	}
	var pending []string
	if err := st.View(func(r persistence.Reader) error {
		var err error
		pending, err = r.PendingSessions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(pending) > 0 {
		t.Errorf("sessions with unanswered messages or unsent replies after shutdown: %v", pending)
	}
}

// noSecrets fails if any secret appears in logs, in the log file under home or in the
// database file, and makes sure the logs are not empty (a check of nothing proves nothing).
func noSecrets(t *testing.T, home, logs string, secrets ...string) {
	t.Helper()
	if !strings.Contains(logs, "reef gateway ready") {
		t.Fatalf("the logs checked for secrets are not the gateway's:\n%s", tail(logs, 2000))
	}
	file, _ := os.ReadFile(filepath.Join(home, "logs", "reef.log"))
	db, _ := os.ReadFile(filepath.Join(home, "data", "reef.db"))
	for _, s := range secrets {
		if s == "" {
			continue
		}
		if i := strings.Index(logs, s); i >= 0 {
			t.Errorf("the gateway's stderr contains the secret %q: ...%s...", s, logs[max(0, i-300):min(len(logs), i+len(s)+100)])
		}
		if strings.Contains(string(file), s) {
			t.Errorf("the log file contains the secret %q", s)
		}
		if strings.Contains(string(db), s) {
			t.Errorf("the database contains the secret %q", s)
		}
	}
}

// envInt reads a positive integer from the environment, else def.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// countOf counts the elements of s equal to v.
func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// killAudit is what the database of a killed gateway holds.
type killAudit struct {
	inbox, outbox int // unanswered messages, unconfirmed replies
	delivered     int // unconfirmed replies the platform already shows in their chat
	resent        int // of those, replies whose session has no recorded draft to edit
}

// draftBucket is where reef records the draft message a run's reply will be edited into
// (actors/connector_draft.go); a reply delivered again is then an edit, not a new message.
const draftBucket = "drafts"

// auditAfterKill reads the database of a killed gateway (the lock died with it): how many
// messages wait for an answer and how many replies wait to be confirmed, and of those how
// many the platform already has (sent, but killed before the outbox row was deleted: these
// are sent again by the next gateway). sent returns the texts the platform has in a chat.
func auditAfterKill(t *testing.T, home string, sent func(chat string) []string) killAudit {
	t.Helper()
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatalf("open the database of the killed gateway: %v", err)
	}
	defer st.Close()
	var a killAudit
	err = st.View(func(r persistence.Reader) error {
		keys, err := r.PendingSessions()
		if err != nil {
			return err
		}
		for _, key := range keys {
			in, err := r.Inbox(key)
			if err != nil {
				return err
			}
			out, err := r.Outbox(key)
			if err != nil {
				return err
			}
			a.inbox += len(in)
			a.outbox += len(out)
			_, draft, err := r.Get(draftBucket, key)
			if err != nil {
				return err
			}
			for _, o := range out {
				if slices.Contains(sent(o.ChatID), o.Text) {
					a.delivered++
					if !draft {
						a.resent++
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
