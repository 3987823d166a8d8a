//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// clusterWindow is what one measured window cost: the server's statements and CPU, the bytes
// through the proxy, reef's CPU per node.
type clusterWindow struct {
	db            pgDelta
	up, down      int64 // bytes to PostgreSQL, from it
	reef          map[string]time.Duration
	seconds       float64
	connsAtTheEnd int64
}

func (w clusterWindow) reefTotal() time.Duration {
	var t time.Duration
	for _, d := range w.reef {
		t += d
	}
	return t
}

// run brings the cluster up, measures it idle, runs the burst with the kill, stops the nodes
// and judges the result.
func (c *clusterRun) run(ctx context.Context, stdout, stderr io.Writer) int {
	if err := c.bringUp(ctx); err != nil {
		fmt.Fprintf(stderr, "reef-bench cluster: %v\n", err)
		return 1
	}
	var idle *clusterWindow
	if c.o.idle > 0 {
		w, err := c.measure(ctx, func() { time.Sleep(c.o.idle) })
		if err != nil {
			fmt.Fprintf(stderr, "reef-bench cluster: idle: %v\n", err)
			return 1
		}
		idle = &w
	}
	var tk takeover
	var killErr error
	var kill func()
	if c.o.killAt > 0 {
		kill = func() { tk, killErr = c.kill(ctx) }
	}
	var injected int
	start := time.Now()
	burst, err := c.measure(ctx, func() { injected = c.burst(ctx, stderr, kill) })
	if err != nil {
		fmt.Fprintf(stderr, "reef-bench cluster: %v\n", err)
		return 1
	}
	time.Sleep(500 * time.Millisecond) // a moment for duplicates to show
	var violations []string
	if killErr != nil {
		violations = append(violations, killErr.Error())
	}
	for _, n := range c.nodes {
		if n.cur == nil {
			continue
		}
		if err := n.cur.stop(); err != nil {
			violations = append(violations, fmt.Sprintf("node %s: %v", n.id, err))
		}
		n.cur = nil
	}

	// What the users see, from the fakes' full history.
	tgLost, tgDup, tgDrafts, tgExamples := c.rig.chatState()
	_, tgEverDup, tgLat := c.rig.tally()
	touched, touchedEx := c.rig.touchedReplies(5)
	dcLost, dcDup, dcEverDup, dcDrafts, dcExamples, dcLat := c.dcChats.state()
	_, rerun, rerunEx := c.rig.duplicates(5)
	lat := append(append([]time.Duration(nil), tgLat...), dcLat...)
	sortDurations(lat)
	var last time.Time
	c.rig.mu.Lock()
	for _, m := range c.rig.msgs {
		if m.replies > 0 && m.replied.After(last) {
			last = m.replied
		}
	}
	stray := c.rig.stray
	c.rig.mu.Unlock()
	c.dcChats.mu.Lock()
	for _, m := range c.dcChats.msgs {
		if m.replies > 0 && m.replied.After(last) {
			last = m.replied
		}
	}
	c.dcChats.mu.Unlock()
	if injected != c.o.total {
		violations = append(violations, fmt.Sprintf("%d of %d messages were sent (a chat stops at a message without a reply)", injected, c.o.total))
	}
	if n := tgLost + dcLost; n > 0 {
		violations = append(violations, fmt.Sprintf("%d messages have no reply in their chat (Telegram %d, Discord %d): %v", n, tgLost, dcLost, dcExamples))
	}
	if n := tgDup + dcDup; n > 0 {
		violations = append(violations, fmt.Sprintf("%d messages have their reply in more than one message (Telegram %d: %v; Discord %d)", n, tgDup, tgExamples, dcDup))
	}
	if rerun > 0 {
		violations = append(violations, fmt.Sprintf("%d messages got two different answers: %v", rerun, rerunEx))
	}
	if stray > 0 {
		violations = append(violations, fmt.Sprintf("%d Telegram replies answer no injected message", stray))
	}
	if touched > 0 {
		violations = append(violations, fmt.Sprintf("%d delivered Telegram replies were edited or deleted afterwards: %v", touched, touchedEx))
	}
	if c.o.killAt > 0 {
		bound := float64(c.o.lease + 5)
		for what, s := range map[string]float64{"partitions": tk.parts, "Telegram poller": tk.telegram, "Discord session": tk.discord} {
			if s < 0 || s > bound {
				violations = append(violations, fmt.Sprintf("the dead node's %s taken over after %.1fs (bound %.0fs; -1: not at all)", what, s, bound))
			}
		}
	}
	sessions, storeProblems := checkClusterStore(ctx, c.dbURL)
	violations = append(violations, storeProblems...)
	doctorOK, doctorLines, doctorOthers := c.doctor(ctx, c.nodes[0])
	if !doctorOK {
		violations = append(violations, fmt.Sprintf("reef doctor's database check did not pass: %q", doctorLines))
	}

	// The report.
	mode := fmt.Sprintf("%d nodes in cluster mode (leaseSeconds %d, %d partitions)", c.o.nodes, c.o.lease, c.o.partitions)
	if c.o.noCluster {
		mode = "1 node on PostgreSQL, cluster mode off"
	}
	dcN := 0
	if c.o.discord {
		dcN = c.o.chats / 2
	}
	fmt.Fprintf(stdout, "reef-bench cluster: %s; %d chats (%d Telegram, %d Discord) sent %d messages (%s); %d model calls, %d tool calls, %d sub-agent runs\n",
		mode, c.o.chats, c.o.chats-dcN, dcN, injected, strings.Join(c.o.mix, ", "), c.rig.llmCalls.Load(), c.rig.toolCalls.Load(), c.rig.childRuns.Load())
	wall := last.Sub(start).Seconds()
	fmt.Fprintf(stdout, "  answered %d in %.1fs: %.1f replies/s; latency p50 %.0fms, p99 %.0fms, max %.0fms; Telegram p50/p99 %.0f/%.0fms, Discord %.0f/%.0fms (its replies found by polling every 20 ms)\n",
		len(lat), wall, float64(len(lat))/wall, ms(percentile(lat, 0.5)), ms(percentile(lat, 0.99)), ms(percentile(lat, 1)),
		ms(percentile(tgLat, 0.5)), ms(percentile(tgLat, 0.99)), ms(percentile(dcLat, 0.5)), ms(percentile(dcLat, 0.99)))
	if c.o.killAt > 0 {
		restart := "not restarted"
		if c.o.restart {
			restart = "restarted once they had"
		}
		fmt.Fprintf(stdout, "  SIGKILL of n1 (holding the Telegram poller and the Discord session) at %.1fs, %s: partitions held by the others after %.1fs, Telegram poller %.1fs, Discord session %.1fs (new IDENTIFY at the fake %.1fs); bound %ds\n",
			tk.killedAt.Sub(start).Seconds(), restart, tk.parts, tk.telegram, tk.discord, tk.identify, c.o.lease+5)
	}
	fmt.Fprintf(stdout, "  in the chats at the end: lost %d, duplicated %d, stray drafts %d (Telegram %d/%d/%d, Discord %d/%d/%d); a reply ever in a second message: Telegram %d, Discord %d\n",
		tgLost+dcLost, tgDup+dcDup, tgDrafts+dcDrafts, tgLost, tgDup, tgDrafts, dcLost, dcDup, dcDrafts, tgEverDup, dcEverDup)
	if tgDrafts > 0 {
		c.rig.mu.Lock()
		fmt.Fprintf(stdout, "  the Telegram stray drafts show: %v (chat %d, the bot's messages:", c.rig.strayTexts, c.rig.strayChat)
		chat := c.rig.strayChat
		c.rig.mu.Unlock()
		for _, m := range c.rig.tg.Messages(chat) {
			fmt.Fprintf(stdout, " #%d deleted=%v %q;", m.MessageID, m.Deleted, m.History)
		}
		fmt.Fprintln(stdout, ")")
	}
	fmt.Fprintf(stdout, "  database: schema %s, %d sessions; reef doctor: %q (its other findings, not about the database: %q)\n", c.schema, sessions, doctorLines, doctorOthers)
	c.printWindow(stdout, "burst", burst, float64(max(injected, 1)))
	if idle != nil {
		c.printWindow(stdout, "idle", *idle, 0)
	}
	if c.o.statements > 0 {
		fmt.Fprintf(stdout, "  the %d statements called most in the burst:\n", c.o.statements)
		for _, l := range burst.db.topStatements(c.o.statements) {
			fmt.Fprintf(stdout, "    %s\n", l)
		}
	}
	if len(violations) > 0 {
		for _, v := range violations {
			fmt.Fprintf(stdout, "  VIOLATION: %s\n", v)
		}
		for _, n := range c.nodes {
			if len(n.lives) > 0 {
				fmt.Fprintf(stderr, "node %s log (last lines):\n%s\n", n.id, n.lives[len(n.lives)-1].log.tail())
			}
		}
		return 1
	}
	fmt.Fprintln(stdout, "  every message has exactly one reply; nothing pending; every tool call has one result; reef doctor passed")
	return 0
}

// measure runs f and returns what the window cost.
func (c *clusterRun) measure(ctx context.Context, f func()) (clusterWindow, error) {
	var w clusterWindow
	before, err := c.watch.read(ctx)
	if err != nil {
		return w, err
	}
	base := c.cpuNow()
	for _, n := range c.nodes {
		n.cpuBase, n.cpuDone = base[n.id], 0
	}
	up, down := c.proxy.toServer.Load(), c.proxy.toClient.Load()
	start := time.Now()
	f()
	w.seconds = time.Since(start).Seconds()
	now := c.cpuNow()
	after, err := c.watch.read(ctx)
	if err != nil {
		return w, err
	}
	w.db = before.to(after)
	w.up, w.down = c.proxy.toServer.Load()-up, c.proxy.toClient.Load()-down
	w.reef = map[string]time.Duration{}
	for _, n := range c.nodes {
		w.reef[n.id] = n.cpuDone
		if cpu, ok := now[n.id]; ok {
			w.reef[n.id] += cpu - n.cpuBase
		}
	}
	w.connsAtTheEnd = c.proxy.conns.Load()
	return w, nil
}

// printWindow prints a window's costs, per message when msgs > 0, else per second.
func (c *clusterRun) printWindow(w io.Writer, name string, x clusterWindow, msgs float64) {
	per, unit := msgs, "message"
	if msgs == 0 {
		per, unit = x.seconds, "second"
	}
	f := func(v int64) float64 { return float64(v) / per }
	fmt.Fprintf(w, "  %s (%.1fs): per %s: %.1f statements, %.2f commits, %.0f bytes to PostgreSQL and %.0f back; PostgreSQL CPU %.2f ms; reef CPU %.2f ms (all nodes)\n",
		name, x.seconds, unit, f(x.db.statements), f(x.db.commits), f(x.up), f(x.down),
		ms(x.db.cpu)/per, ms(x.reefTotal())/per)
	var ids []string
	for id := range x.reef {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	fmt.Fprintf(w, "    reef CPU by node:")
	for _, id := range ids {
		fmt.Fprintf(w, " %s %.2fs", id, x.reef[id].Seconds())
	}
	fmt.Fprintf(w, "; per %s: WAL %.0f bytes, rows inserted %.1f, updated %.1f, deleted %.1f, read-only transactions and rollbacks %.2f\n",
		unit, f(x.db.wal), f(x.db.inserted), f(x.db.updated), f(x.db.deleted), f(x.db.rollbacks))
	kinds := x.db.statementKinds()
	var names []string
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "    statements by kind, per %s:", unit)
	for _, k := range names {
		if k != "rig" {
			fmt.Fprintf(w, " %s %.2f;", k, f(kinds[k]))
		}
	}
	fmt.Fprintln(w)
}
