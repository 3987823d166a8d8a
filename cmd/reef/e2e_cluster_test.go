package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
	"github.com/reefgw/reef/subagent"
)

// clusterYAML is the cluster block of node id.
func clusterYAML(id string, partitions, leaseSeconds int) string {
	return fmt.Sprintf("cluster:\n  enabled: true\n  nodeId: %s\n  partitions: %d\n  leaseSeconds: %d\n", id, partitions, leaseSeconds)
}

// pgConn connects to url to look into the cluster's tables, for 10 s at most; done closes it.
func pgConn(t *testing.T, url string) (ctx context.Context, conn *pgx.Conn, done func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return ctx, conn, func() { conn.Close(ctx); cancel() }
}

// leaseOwners reads the live leases' owners: partitions per node.
func leaseOwners(t *testing.T, url string) map[string]int {
	t.Helper()
	ctx, conn, done := pgConn(t, url)
	defer done()
	rows, err := conn.Query(ctx, "SELECT owner FROM reef_leases WHERE expires > now()")
	if err != nil {
		t.Logf("reading the leases: %v", err) // the table is not there yet
		return nil
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, o := range owners {
		out[o]++
	}
	return out
}

// TestE2EClusterKillAndPause: three `reef gateway` nodes in cluster mode on one PostgreSQL,
// all polling the Telegram fake, answer a burst of chats. One node is SIGKILLed mid burst:
// its partitions are taken over within leaseSeconds + 5 s. Another is SIGSTOPped past its
// lease and SIGCONTed: it writes nothing under the lease it lost and rejoins. Judged by the
// fake's full history: every message answered exactly once, in order; nothing left pending.
func TestE2EClusterKillAndPause(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease = 32, 4
	const chats, perChat = 18, 6
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 30*time.Millisecond, nil)
	var nodes []*node
	for _, id := range []string{"n1", "n2", "n3"} {
		yaml := telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`) + postgresYAML(url) + clusterYAML(id, partitions, lease)
		if os.Getenv("REEF_CLUSTER_LOGS") != "" {
			yaml += "log:\n  level: debug\n"
		}
		_, e := writeConfig(t, llm.srv, yaml)
		nodes = append(nodes, newNode(t, e))
	}
	spread := func(alive ...string) bool {
		o := leaseOwners(t, url)
		total := 0
		for _, id := range alive {
			if o[id] < partitions/len(alive) {
				return false
			}
			total += o[id]
		}
		return total == partitions
	}
	if !eventually(time.Minute, func() bool { return spread("n1", "n2", "n3") }) {
		t.Fatalf("partitions not spread over three nodes: %v\n%s", leaseOwners(t, url), tail(nodes[0].logs(), 3000))
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var lost []string
	for c := range chats {
		chat := int64(8100 + c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perChat {
				marker := tok(chat, i)
				tg.UserSays(chat, chat, "please answer "+marker)
				if !eventually(2*time.Minute, func() bool { return slices.Contains(tg.Sent(chat), replyTo(marker)) }) {
					mu.Lock()
					lost = append(lost, marker)
					mu.Unlock()
					return
				}
			}
		}()
	}

	// SIGKILL n3 mid burst; its partitions move within leaseSeconds + 5 s.
	eventually(time.Minute, func() bool { return tg.Calls("sendMessage") >= chats*perChat/4 })
	nodes[2].kill()
	killed := time.Now()
	if !eventually(time.Duration(lease+5)*time.Second, func() bool { return spread("n1", "n2") }) {
		t.Errorf("n3's partitions not taken over within %d s: %v", lease+5, leaseOwners(t, url))
	}
	t.Logf("takeover after SIGKILL: %v", time.Since(killed).Round(100*time.Millisecond))

	// SIGSTOP n2 past its lease, while the chats talk; n1 takes everything; SIGCONT: n2 rejoins.
	eventually(time.Minute, func() bool { return tg.Calls("sendMessage") >= chats*perChat/2 })
	n2 := nodes[1].cur.cmd.Process
	if err := n2.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	if !eventually(time.Duration(lease+5)*time.Second, func() bool { return spread("n1") }) {
		t.Errorf("n2's partitions not taken over within %d s of its pause: %v", lease+5, leaseOwners(t, url))
	}
	t.Logf("takeover after SIGSTOP: %v", time.Since(paused).Round(100*time.Millisecond))
	time.Sleep(time.Second) // n2 stays frozen a little past the takeover: what it held in hand is stale
	if err := n2.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !eventually(time.Minute, func() bool { return spread("n1", "n2") }) {
		t.Errorf("n2 did not rejoin after SIGCONT: %v", leaseOwners(t, url))
	}

	wg.Wait()
	if len(lost) > 0 {
		t.Fatalf("%d messages got no reply, e.g. %v\nn1:\n%s\nn2:\n%s", len(lost), lost[:min(10, len(lost))],
			tail(nodes[0].logs(), 5000), tail(nodes[1].logs(), 5000))
	}
	for c := range chats {
		chat := int64(8100 + c)
		var want []string
		for i := range perChat {
			want = append(want, replyTo(tok(chat, i)))
		}
		var replies []string
		for _, m := range tg.Sent(chat) {
			if tokenRE.MatchString(m) {
				replies = append(replies, m)
			}
		}
		if !slices.Equal(replies, want) {
			t.Errorf("chat %d got replies %q; want exactly %q", chat, replies, want)
		}
	}
	if d := os.Getenv("REEF_CLUSTER_LOGS"); d != "" { // debugging: every node's log
		for i, n := range nodes {
			_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("n%d.log", i+1)), []byte(n.logs()), 0o600)
		}
	}
	nodes[0].stop()
	nodes[1].stop()
	checkSettledPostgres(t, url)
	checkTranscriptsOnce(t, url, 8100, chats, perChat)
	for _, n := range nodes {
		noSecrets(t, "", n.logs(), tgToken, canary)
	}
}

// partitionOwners reads each live lease's owner by partition.
func partitionOwners(t *testing.T, url string) map[int]string {
	t.Helper()
	ctx, conn, done := pgConn(t, url)
	defer done()
	rows, err := conn.Query(ctx, "SELECT part, owner FROM reef_leases WHERE expires > now()")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	var part int32
	var owner string
	if _, err := pgx.ForEachRow(rows, []any{&part, &owner}, func() error { out[int(part)] = owner; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestE2EClusterSubagentAcrossNodes: two nodes; each chat's agent delegates to a sub-agent
// (sessions_spawn, then sessions_yield). A child whose partition another node holds runs
// there (its task is an inbox entry), and its completion wakes the parent on its own node:
// each chat gets exactly one report, and some parent and child ran on different nodes.
func TestE2EClusterSubagentAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease, chats = 16, 4, 8
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		n := len(req.Messages)
		first, last := req.Messages[0].Content, req.Messages[n-1]
		marker := tokenRE.FindString(req.Messages[n-1].Content)
		for i := n - 1; marker == "" && i >= 0; i-- {
			marker = tokenRE.FindString(req.Messages[i].Content)
		}
		switch {
		case strings.Contains(first, "[Sub-agent task]"):
			return fake.Reply{Text: "child found " + marker}
		case strings.Contains(last.Content, "[Internal event: a sub-agent finished"):
			return fake.Reply{Text: "report " + marker}
		case last.Role == messages.RoleTool && strings.Contains(last.Content, `"status":"accepted"`):
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "y1", Name: "sessions_yield", Arguments: `{"message":"waiting"}`}}}
		}
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "s1", Name: "sessions_spawn",
			Arguments: `{"task":"look up ` + marker + `","label":"helper","runtime":"subagent"}`}}}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	var nodes []*node
	for _, id := range []string{"n1", "n2"} {
		// The senders are owners: sessions_spawn is not a guest's tool.
		_, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["8300", "8301", "8302", "8303", "8304", "8305", "8306", "8307"]`)+
			postgresYAML(url)+clusterYAML(id, partitions, lease))
		nodes = append(nodes, newNode(t, e))
	}
	if !eventually(time.Minute, func() bool { o := leaseOwners(t, url); return o["n1"] == partitions/2 && o["n2"] == partitions/2 }) {
		t.Fatalf("partitions not spread: %v", leaseOwners(t, url))
	}
	for c := range chats {
		chat := int64(8300 + c)
		tg.UserSays(chat, chat, "delegate "+tok(chat, 0))
	}
	for c := range chats {
		chat := int64(8300 + c)
		want := "report " + tok(chat, 0)
		if !eventually(time.Minute, func() bool { return slices.Contains(tg.Sent(chat), want) }) {
			t.Fatalf("chat %d: no report, it shows %q\nn1:\n%s\nn2:\n%s", chat, tg.Sent(chat), tail(nodes[0].logs(), 4000), tail(nodes[1].logs(), 4000))
		}
	}
	time.Sleep(2 * time.Second) // a second completion or report would have come by now
	owners := partitionOwners(t, url)
	for _, n := range nodes {
		n.stop()
	}
	for c := range chats {
		chat := int64(8300 + c)
		if got := tg.Sent(chat); len(got) != 1 || got[0] != "report "+tok(chat, 0) {
			t.Errorf("chat %d shows %q; want one report", chat, got)
		}
	}
	// Which ran where: the children's keys from the store, their parents from the links.
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	across := 0
	err = st.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		for _, info := range infos {
			l, ok, lerr := subagent.Get(r, info.Key)
			if lerr != nil {
				return lerr
			}
			if ok && owners[cluster.Partition(l.Child, partitions)] != owners[cluster.Partition(l.Parent, partitions)] {
				across++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d children ran on another node than their parent", across, chats)
	if across == 0 {
		t.Errorf("no child ran on another node than its parent: the test proved nothing (owners %v)", owners)
	}
	checkSettledPostgres(t, url)
}

// TestE2EClusterStop: two nodes poll one bot, so a chat's /stop is accepted by either node
// (the other finds it a duplicate); it reaches the run on the node that owns the chat's
// session, through the shared inbox when another node accepted it. Every hanging run stops.
func TestE2EClusterStop(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease, chats = 16, 4, 6
	tg := telegramtest.NewWithToken(t, tgToken)
	llm := newEchoLLM(t, 0, func(marker string) time.Duration {
		if strings.HasPrefix(marker, "tok-hang") {
			return time.Hour // honours cancellation
		}
		return 0
	})
	var nodes []*node
	for _, id := range []string{"n1", "n2"} {
		_, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, `allowFrom: ["8400", "8401", "8402", "8403", "8404", "8405"]`)+
			postgresYAML(url)+clusterYAML(id, partitions, lease))
		nodes = append(nodes, newNode(t, e))
	}
	if !eventually(time.Minute, func() bool { o := leaseOwners(t, url); return o["n1"] == partitions/2 && o["n2"] == partitions/2 }) {
		t.Fatalf("partitions not spread: %v", leaseOwners(t, url))
	}
	for c := range chats {
		chat := int64(8400 + c)
		tg.UserSays(chat, chat, "a long job "+tok("hang", c))
	}
	for c := range chats {
		if !eventually(30*time.Second, func() bool { return llm.requests(tok("hang", c)) == 1 }) {
			t.Fatalf("run %d did not reach the model", c)
		}
	}
	for c := range chats {
		chat := int64(8400 + c)
		tg.UserSays(chat, chat, "/stop")
	}
	for c := range chats {
		chat := int64(8400 + c)
		if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(chat), "Stopped.") }) {
			t.Fatalf("chat %d: no Stopped.: %q\nn1:\n%s\nn2:\n%s", chat, tg.Sent(chat), tail(nodes[0].logs(), 3000), tail(nodes[1].logs(), 3000))
		}
	}
	owners := partitionOwners(t, url)
	for _, n := range nodes {
		n.stop()
	}
	for c := range chats {
		chat := int64(8400 + c)
		if got := tg.Sent(chat); !slices.Equal(got, []string{"Stopped."}) {
			t.Errorf("chat %d shows %q; want only Stopped.", chat, got)
		}
		key := fmt.Sprintf("agent:main:telegram:direct:%d", chat)
		t.Logf("chat %d runs on %s", chat, owners[cluster.Partition(key, partitions)])
	}
	checkSettledPostgres(t, url)
}

// checkTranscriptsOnce checks that each chat's transcript holds each message and its reply
// exactly once: a node that lost its lease wrote no entry of a run it could not finish.
func checkTranscriptsOnce(t *testing.T, url string, first int64, chats, perChat int) {
	t.Helper()
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for c := range chats {
		chat := first + int64(c)
		var entries []persistence.Entry
		if err := st.View(func(r persistence.Reader) error {
			entries, err = r.Messages(fmt.Sprintf("agent:main:telegram:direct:%d", chat), 0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for i := range perChat {
			marker := tok(chat, i)
			asked, answered := 0, 0
			for _, e := range entries {
				switch {
				case e.Role == messages.RoleUser && strings.Contains(e.Content, marker):
					asked++
				case e.Role == messages.RoleAssistant && e.Content == replyTo(marker):
					answered++
				}
			}
			if asked != 1 || answered != 1 {
				t.Errorf("chat %d's transcript holds %s %d times and its reply %d times; want once each", chat, marker, asked, answered)
			}
		}
	}
}
