package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// shardHolders reads who holds each live Discord shard unit: shard unit → node.
func shardHolders(t *testing.T, url string) map[string]string {
	t.Helper()
	ctx, conn, done := pgConn(t, url)
	defer done()
	rows, err := conn.Query(ctx, "SELECT name, owner FROM reef_work WHERE name LIKE 'channel:discord:%' AND expires > now()")
	if err != nil {
		return nil // the table is not there yet
	}
	out := map[string]string{}
	for rows.Next() {
		var name, owner string
		if err := rows.Scan(&name, &owner); err != nil {
			t.Fatal(err)
		}
		out[name] = owner
	}
	return out
}

// TestE2EClusterDiscordShards: two `reef gateway` nodes in cluster mode front a Discord bot
// that Discord wants in two shards: each node runs one shard (its lease), every guild's
// messages and the DMs are answered once, `reef cluster status` names each shard's holder;
// when one node is SIGKILLed the other takes its shard over within leaseSeconds + 5 s plus
// the pause between IDENTIFYs, and answers there too. No shard ever ran on both nodes.
func TestE2EClusterDiscordShards(t *testing.T) {
	url := pgtest.URL(t)
	const token, partitions, lease = "discord-shards-token.e2e", 16, 4
	dc := discordtest.New(t, discordtest.Config{Token: token, Shards: 2, MaxConcurrency: 2})
	llm := newEchoLLM(t, 0, nil)
	yaml := discordYAML(token, dc.URL) + "    groups: [\"*\"]\n    requireMention: false\n"
	var nodes []*node
	for _, id := range []string{"n1", "n2"} {
		_, e := writeConfig(t, llm.srv, yaml+postgresYAML(url)+clusterYAML(id, partitions, lease))
		nodes = append(nodes, newNode(t, e))
	}
	spread := func() bool {
		h := shardHolders(t, url)
		return len(h) == 2 && h["channel:discord:default:shard:0"] != h["channel:discord:default:shard:1"] &&
			len(dc.LiveShards()) == 2
	}
	if !eventually(time.Minute, spread) {
		t.Fatalf("shards not one per node: %v\nn1:\n%s\nn2:\n%s", shardHolders(t, url), tail(nodes[0].logs(), 3000), tail(nodes[1].logs(), 3000))
	}
	holders := shardHolders(t, url)
	t.Logf("shard holders: %v", holders)

	sent := func(chat string) []string { return dc.Sent(chat) }
	round := func(name string) map[string]string {
		want := map[string]string{}
		for shard := range 2 {
			channel := fmt.Sprintf("%s-%d", name, shard)
			want[channel] = tok(fmt.Sprintf("%s%d", name, shard), 0)
			dc.GuildMessage(t, discordtest.GuildOnShard(shard, 2, 1), channel, "8100", "answer "+want[channel])
		}
		dm := "dm-" + name
		want[dm] = tok("dm"+name, 0)
		dc.UserSays(t, dm, "8101", "answer "+want[dm])
		return want
	}
	first := round("first")
	answeredOnce(t, nodes[0], sent, time.Minute, first)

	status := reef(t, nodes[1].env, "", "cluster", "status")
	if status.code != 0 {
		t.Fatalf("reef cluster status: exit %d: %s", status.code, status.stderr)
	}
	t.Logf("reef cluster status:\n%s", status.stdout)
	for unit, owner := range holders {
		if !strings.Contains(status.stdout, unit+"  "+owner) {
			t.Errorf("reef cluster status does not show %s held by %s:\n%s", unit, owner, status.stdout)
		}
	}

	nodes[0].kill()
	killed := time.Now()
	if !eventually(time.Minute, func() bool {
		h := shardHolders(t, url)
		return h["channel:discord:default:shard:0"] == "n2" && h["channel:discord:default:shard:1"] == "n2" &&
			len(dc.LiveShards()) == 2
	}) {
		t.Fatalf("n2 did not take both shards: %v\nn2:\n%s", shardHolders(t, url), tail(nodes[1].logs(), 4000))
	}
	took := time.Since(killed)
	t.Logf("n2 holds both shards %v after n1's SIGKILL", took.Round(100*time.Millisecond))
	if limit := (lease+5)*time.Second + 5*time.Second; took > limit {
		t.Errorf("the shards moved after %v, want within %v (leaseSeconds + 5 s + an IDENTIFY's pause)", took, limit)
	}
	second := round("second")
	answeredOnce(t, nodes[1], sent, time.Minute, second)
	nodes[1].stop()
	for _, want := range []map[string]string{first, second} {
		for chat, marker := range want {
			if got := dc.Sent(chat); len(got) != 1 || got[0] != replyTo(marker) {
				t.Errorf("%s shows %q, want exactly one %q", chat, got, replyTo(marker))
			}
		}
	}
	if n := dc.Overlaps(); n != 0 {
		t.Errorf("%d IDENTIFYs of a shard another node's session was running", n)
	}
}
