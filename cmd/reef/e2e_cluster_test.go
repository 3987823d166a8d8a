package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// clusterYAML is the cluster block of node id.
func clusterYAML(id string, partitions, leaseSeconds int) string {
	return fmt.Sprintf("cluster:\n  enabled: true\n  nodeId: %s\n  partitions: %d\n  leaseSeconds: %d\n", id, partitions, leaseSeconds)
}

// leaseOwners reads the live leases' owners: partitions per node.
func leaseOwners(t *testing.T, url string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT owner FROM reef_leases WHERE expires > now()")
	if err != nil {
		return nil // the table is not there yet
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
		_, e := writeConfig(t, llm.srv, telegramYAML(tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+postgresYAML(url)+clusterYAML(id, partitions, lease))
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
	for _, n := range nodes {
		noSecrets(t, "", n.logs(), tgToken, canary)
	}
}
