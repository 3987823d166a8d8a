package main

import (
	"strings"
	"testing"
	"time"
)

// TestE2EPostgresOutageCluster: two `reef gateway` nodes in cluster mode on one PostgreSQL
// behind the proxy answer a burst of Telegram chats (one of them polls); the database is
// unreachable for 20 s mid burst. Every lease lapses meanwhile; when the database is back
// the nodes take the partitions again by the usual plan, with new epochs, and every message
// is answered exactly once, in order; nothing is left pending.
func TestE2EPostgresOutageCluster(t *testing.T) {
	r := newOutageRig(t)
	const first, chats, perChat, partitions, lease = 8200, 16, 5, 16, 4
	var nodes []*node
	var envs []env
	for _, id := range []string{"n1", "n2"} {
		_, e := writeConfig(t, r.llm.srv, telegramYAML(r.tg.URL, "dmPolicy: open", `allowFrom: ["*"]`)+
			postgresYAML(r.url)+clusterYAML(id, partitions, lease))
		nodes, envs = append(nodes, newNode(t, e)), append(envs, e)
	}
	if !eventually(time.Minute, func() bool {
		o := leaseOwners(t, r.direct)
		return o["n1"] > 0 && o["n2"] > 0 && o["n1"]+o["n2"] == partitions
	}) {
		t.Fatalf("partitions not spread over two nodes: %v", leaseOwners(t, r.direct))
	}
	wait := r.burst(first, chats, perChat)
	r.outage(t, envs[0], chats*perChat)
	lost := wait()
	if !eventually(time.Minute, func() bool {
		o := leaseOwners(t, r.direct)
		return o["n1"] > 0 && o["n2"] > 0 && o["n1"]+o["n2"] == partitions
	}) {
		t.Errorf("partitions not spread over both nodes again after the outage: %v", leaseOwners(t, r.direct))
	}
	for _, n := range nodes {
		n.stop()
	}
	var all string
	for i, n := range nodes {
		logs := n.logs()
		all += logs
		if c := strings.Count(logs, "storage unavailable"); c > 1 {
			t.Errorf("node %d logged the outage's start %d times; want once", i+1, c)
		}
		noSecrets(t, "", logs, tgToken, canary, outagePassword)
	}
	saveLogs(t, all)
	r.judge(t, lost, first, chats, perChat, all)
	checkTranscriptsOnce(t, r.direct, first, chats, perChat)
}
