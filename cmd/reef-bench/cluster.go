//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
)

const clusterUsage = `reef-bench cluster — several reef gateway nodes in cluster mode on one PostgreSQL, one SIGKILLed

Usage:
  reef-bench cluster -database-url URL [-reef PATH] [-nodes 3] [-chats 200] [-messages 1000]
                     [-lease-seconds 10] [-kill-at 0.4] [-restart] [-llm-latency 20ms] [-idle 10s]

The nodes (each its own REEF_HOME and node id, one shared workspace) front the fake Telegram
and the fake Discord together: half the chats are Telegram chats, half Discord direct
messages. Each chat sends its messages one after the other's reply, cycling through plain, an
ls tool call, a sub-agent delegation (sessions_spawn + sessions_yield), plain, a delegation.
Node 1 starts first and takes the Telegram poller and the Discord gateway session; when
-kill-at of the messages were answered it is SIGKILLed, and the rig measures how long the
others take to hold its partitions, the Telegram poller and the Discord session (target:
leaseSeconds + 5 s); with -restart it is started again once they did. In the end every
message must have exactly one reply (the fakes' full history), the database nothing pending
and every tool call one result, and reef doctor's database check must pass.

The rig creates a new schema on -database-url and sends the nodes through a counting TCP
proxy. It reports per message: PostgreSQL statements (pg_stat_statements, when the server
preloads it) and commits (pg_stat_database), bytes each way, the server's CPU time (the
postmaster and its children, from /proc), reef's CPU time per node; and the same per second
for the idle cluster (-idle), which is the cluster's own overhead.

Flags:
`

// clusterOpts are the flags of reef-bench cluster.
type clusterOpts struct {
	reef, database       string
	nodes, chats, total  int
	partitions, lease    int
	killAt               float64
	restart, noCluster   bool
	discord              bool // half the chats on Discord (else all on Telegram)
	latency, idle, timer time.Duration
	timeout, msgWait     time.Duration
	statements           int
	keepSchema           bool
	mix                  []string // the kinds of a chat's messages, in turn
}

// clusterNode is one node: its home, its id and its processes.
type clusterNode struct {
	id, home string
	cur      *benchChild
	lives    []*benchChild
	cpuDone  time.Duration // CPU of the ended lives within the measured window
	cpuBase  time.Duration // CPU of the current life when the window began
}

func runBenchCluster(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("reef-bench cluster", flag.ContinueOnError)
	var o clusterOpts
	reefPath := reefFlag(flags)
	flags.StringVar(&o.database, "database-url", os.Getenv("REEF_BENCH_DATABASE_URL"), "PostgreSQL to run on (a new schema is made in it); default $REEF_BENCH_DATABASE_URL")
	flags.IntVar(&o.nodes, "nodes", 3, "reef gateway nodes")
	flags.IntVar(&o.chats, "chats", 200, "chats (half Telegram, half Discord)")
	flags.IntVar(&o.total, "messages", 1000, "messages in all")
	flags.IntVar(&o.partitions, "partitions", 256, "cluster.partitions")
	flags.IntVar(&o.lease, "lease-seconds", 10, "cluster.leaseSeconds")
	flags.Float64Var(&o.killAt, "kill-at", 0.4, "SIGKILL node 1 when this share of the messages was answered (0: no kill)")
	flags.BoolVar(&o.restart, "restart", true, "start the killed node again once the others took its work over")
	flags.BoolVar(&o.discord, "discord", true, "half the chats are Discord direct messages (false: every chat on Telegram)")
	flags.BoolVar(&o.noCluster, "no-cluster", false, "one node on PostgreSQL without cluster mode (-nodes 1 -kill-at 0): the baseline of the per-message costs")
	flags.DurationVar(&o.latency, "llm-latency", 20*time.Millisecond, "the most the fake LLM waits before an answer (random up to this)")
	flags.DurationVar(&o.idle, "idle", 10*time.Second, "measure the idle cluster this long before the burst (0: skip)")
	flags.DurationVar(&o.timeout, "timeout", 10*time.Minute, "bound of the whole run")
	flags.DurationVar(&o.msgWait, "message-wait", time.Minute, "a chat gives up on a message without a reply after this long (counted lost)")
	flags.BoolVar(&o.keepSchema, "keep-schema", false, "keep the run's schema in the database afterwards (its name is printed)")
	flags.IntVar(&o.statements, "statements", 0, "print the N statements called most during the burst")
	mix := flags.String("mix", strings.Join(clusterKinds, ","), "the kinds of each chat's messages, in turn: plain | tool (an ls call) | delegate (a sub-agent)")
	if code, done := parseFlags(flags, args, clusterUsage, stdout, stderr); done {
		return code
	}
	switch {
	case flags.NArg() > 0:
		fmt.Fprintf(stderr, "reef-bench cluster: unexpected argument %q\n", flags.Arg(0))
		return 2
	case o.database == "":
		fmt.Fprintln(stderr, "reef-bench cluster: -database-url is required (eval \"$(.ci/postgres.sh start /tmp/pg)\"; use $REEF_TEST_DATABASE_URL)")
		return 2
	case o.nodes < 1 || o.chats < 2 || o.total < o.chats || o.killAt < 0 || o.killAt >= 1:
		fmt.Fprintln(stderr, "reef-bench cluster: want -nodes ≥ 1, -chats ≥ 2, -messages ≥ -chats, 0 ≤ -kill-at < 1")
		return 2
	case o.noCluster && (o.nodes != 1 || o.killAt != 0):
		fmt.Fprintln(stderr, "reef-bench cluster: -no-cluster runs one node: -nodes 1 -kill-at 0")
		return 2
	case o.killAt > 0 && o.nodes < 2:
		fmt.Fprintln(stderr, "reef-bench cluster: a kill needs -nodes ≥ 2")
		return 2
	}
	o.reef = *reefPath
	o.mix = strings.Split(*mix, ",")
	for _, k := range o.mix {
		if k != "plain" && k != "tool" && k != "delegate" {
			fmt.Fprintf(stderr, "reef-bench cluster: -mix: %q is not plain, tool or delegate\n", k)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	c, err := newClusterRun(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "reef-bench cluster: %v\n", err)
		return 1
	}
	defer c.close()
	return c.run(ctx, stdout, stderr)
}

// clusterRun is one run: the rig, the database side and the nodes.
type clusterRun struct {
	o        clusterOpts
	rig      *benchRig
	cleanup  func()
	dcChats  *discordChats
	proxy    *pgProxy
	watch    *pgWatch
	dbURL    string // the schema, straight to PostgreSQL (the rig's checks)
	schema   string
	nodesURL string // the same through the proxy (the nodes)
	nodes    []*clusterNode
}

func newClusterRun(ctx context.Context, o clusterOpts, stderr io.Writer) (*clusterRun, error) {
	c := &clusterRun{o: o}
	reef, cleanup, err := resolveReef(o.reef, stderr)
	if err != nil {
		return nil, err
	}
	c.cleanup = cleanup
	if c.rig, err = newBenchRig(0, reef, nil); err != nil {
		c.close()
		return nil, err
	}
	c.rig.jitter, c.rig.subagents = o.latency, true
	c.rig.dc = discordtest.Start(discordtest.Config{Token: benchDiscordToken, HeartbeatInterval: discordHeartbeat})
	c.dcChats = newDiscordChats(c.rig.dc)
	if c.dbURL, c.schema, err = benchSchema(ctx, o.database); err != nil {
		c.close()
		return nil, err
	}
	target, err := pgHostPort(c.dbURL)
	if err != nil {
		c.close()
		return nil, err
	}
	if c.proxy, err = startPGProxy(target); err != nil {
		c.close()
		return nil, err
	}
	if c.nodesURL, err = viaProxy(c.dbURL, c.proxy.ln.Addr().String()); err != nil {
		c.close()
		return nil, err
	}
	// The rig's own connection keeps the server's search_path: pg_stat_statements is there.
	if c.watch, err = openPGWatch(ctx, o.database, c.schema); err != nil {
		c.close()
		return nil, err
	}
	workspace := filepath.Join(c.rig.dir, "workspace")
	for i := range o.nodes {
		n := &clusterNode{id: fmt.Sprintf("n%d", i+1), home: filepath.Join(c.rig.dir, fmt.Sprintf("node%d", i+1))}
		if err := c.writeNodeConfig(n, workspace); err != nil {
			c.close()
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	return c, nil
}

func (c *clusterRun) close() {
	for _, n := range c.nodes {
		if n.cur != nil {
			n.cur.kill()
		}
	}
	if c.watch != nil {
		if !c.o.keepSchema {
			c.watch.dropSchema()
		}
		c.watch.Close()
	}
	if c.proxy != nil {
		c.proxy.Close()
	}
	if c.rig != nil {
		c.rig.Close()
	}
	if c.cleanup != nil {
		c.cleanup()
	}
}

// writeNodeConfig writes node n's reef.yaml: both platforms, the shared workspace, the
// sub-agent and tool grants of the guests, PostgreSQL through the proxy, cluster mode.
func (c *clusterRun) writeNodeConfig(n *clusterNode, workspace string) error {
	if err := os.MkdirAll(n.home, 0o700); err != nil {
		return err
	}
	r := c.rig
	y := fmt.Sprintf(`providers:
  openai: {type: openai, baseUrl: %s, apiKey: sk-reef-bench}
agents:
  - id: main
    model: openai/fake
    workspace: %s
%ssession:
  rateLimit: {messages: 0}
log:
  format: json
channels:
  telegram:
    botToken: "%s"
    apiRoot: %s
    dmPolicy: open
    allowFrom: ["*"]
%s  discord:
    token: %q
    apiBase: %s
    dmPolicy: open
    allowFrom: ["*"]
%sstorage:
  driver: postgres
  url: %q
`, r.llmURL, workspace, subagentAgentYAML, benchToken, r.tg.URL, subagentGuestYAML, benchDiscordToken, r.dc.URL, subagentGuestYAML, c.nodesURL)
	if !c.o.noCluster {
		y += fmt.Sprintf("cluster:\n  enabled: true\n  nodeId: %s\n  partitions: %d\n  leaseSeconds: %d\n", n.id, c.o.partitions, c.o.lease)
	}
	return os.WriteFile(filepath.Join(n.home, "reef.yaml"), []byte(y), 0o600)
}

// start starts a new process of node n.
func (c *clusterRun) start(ctx context.Context, n *clusterNode) error {
	c.rig.home = n.home // startGateway runs on the rig's home
	child, err := c.rig.startGateway(ctx)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.id, err)
	}
	n.cur = child
	n.lives = append(n.lives, child)
	return nil
}

// Units of work the kill moves: the Telegram poller, and the Discord gateway session (one
// unit, or with sharding one unit per shard, "channel:discord:default:shard:<id>").
const (
	tgUnit = "channel:telegram:default"
	dcUnit = "channel:discord:default"
)

// discordHeldBy reports whether Discord units are held and node holds every one of them;
// movedOff whether they are held and node holds none.
func discordHeldBy(work map[string]string, node string) (all, none bool) {
	n, mine := 0, 0
	for unit, owner := range work {
		if unit == dcUnit || strings.HasPrefix(unit, dcUnit+":") {
			n++
			if owner == node {
				mine++
			}
		}
	}
	return n > 0 && mine == n, n > 0 && mine == 0
}

// spread reports whether the live partitions are all held, by the nodes in alive only, each
// with at least its even share.
func (c *clusterRun) spread(ctx context.Context, alive []*clusterNode) bool {
	parts, _, err := c.watch.holders(ctx)
	if err != nil {
		return false
	}
	total := 0
	for _, n := range alive {
		if parts[n.id] < c.o.partitions/len(alive) {
			return false
		}
		total += parts[n.id]
	}
	return total == c.o.partitions
}

// bringUp starts node 1, waits until it holds the Telegram poller and the Discord session,
// then the others, and waits until the partitions are spread over all.
func (c *clusterRun) bringUp(ctx context.Context) error {
	if err := c.start(ctx, c.nodes[0]); err != nil {
		return err
	}
	if c.o.noCluster {
		return waitFor(ctx, 30*time.Second, func() bool { n, _ := c.rig.pollsSeen(); return n > 0 && c.rig.dc.Connected() })
	}
	held := func() bool {
		_, work, err := c.watch.holders(ctx)
		all, _ := discordHeldBy(work, "n1")
		return err == nil && work[tgUnit] == "n1" && all && c.rig.dc.Connected()
	}
	if err := waitForEvery(ctx, 60*time.Second, 100*time.Millisecond, held); err != nil {
		return fmt.Errorf("node 1 did not take the Telegram poller and the Discord session: %w\n%s", err, c.nodes[0].cur.log.tail())
	}
	for _, n := range c.nodes[1:] {
		if err := c.start(ctx, n); err != nil {
			return err
		}
	}
	if err := waitForEvery(ctx, 2*time.Minute, 200*time.Millisecond, func() bool { return c.spread(ctx, c.nodes) }); err != nil {
		parts, _, _ := c.watch.holders(ctx)
		return fmt.Errorf("partitions not spread over %d nodes: %v", len(c.nodes), parts)
	}
	return nil
}

// waitForEvery polls cond every period until it holds, d passes or ctx ends.
func waitForEvery(ctx context.Context, d, every time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
	return nil
}

// cpuNow is the CPU time of every node's current process.
func (c *clusterRun) cpuNow() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, n := range c.nodes {
		if n.cur == nil {
			continue
		}
		if st, err := readProc(n.cur.pid()); err == nil {
			out[n.id] = st.cpu
		}
	}
	return out
}

// takeover is what the kill measured: seconds from the SIGKILL until the others held the
// dead node's partitions, the Telegram poller and the Discord session (-1: not within the
// bound), and until the fake Discord saw a new IDENTIFY.
type takeover struct {
	parts, telegram, discord, identify float64
	killedAt                           time.Time
}

// kill SIGKILLs node 1 and measures the takeovers, bounded by leaseSeconds + 30 s.
func (c *clusterRun) kill(ctx context.Context) (takeover, error) {
	n := c.nodes[0]
	if st, err := readProc(n.cur.pid()); err == nil {
		n.cpuDone += st.cpu - n.cpuBase
	}
	identifies := c.rig.dc.Identifies()
	if err := n.cur.kill(); err != nil {
		return takeover{}, err
	}
	t := takeover{parts: -1, telegram: -1, discord: -1, identify: -1, killedAt: time.Now()}
	n.cur = nil
	alive := c.nodes[1:]
	deadline := t.killedAt.Add(time.Duration(c.o.lease+30) * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil && (t.parts < 0 || t.telegram < 0 || t.discord < 0 || t.identify < 0) {
		since := time.Since(t.killedAt).Seconds()
		parts, work, err := c.watch.holders(ctx)
		if err == nil {
			total, others := 0, true
			for _, a := range alive {
				total += parts[a.id]
			}
			others = parts[n.id] == 0
			if t.parts < 0 && others && total == c.o.partitions {
				t.parts = since
			}
			if t.telegram < 0 && work[tgUnit] != "" && work[tgUnit] != n.id {
				t.telegram = since
			}
			if _, moved := discordHeldBy(work, n.id); t.discord < 0 && moved {
				t.discord = since
			}
		}
		if t.identify < 0 && c.rig.dc.Identifies() > identifies {
			t.identify = since
		}
		time.Sleep(100 * time.Millisecond) // bounded polling of the database and the fake
	}
	if c.o.restart {
		if err := c.start(ctx, n); err != nil {
			return t, err
		}
		n.cpuBase = 0
	}
	return t, nil
}

// burst runs the chats; kill, when set, is called once when its share was answered.
func (c *clusterRun) burst(ctx context.Context, stderr io.Writer, kill func()) (injected int) {
	perChat := func(i int) int {
		k := c.o.total / c.o.chats
		if i < c.o.total%c.o.chats {
			k++
		}
		return k
	}
	var answered, sent atomic.Int64
	var wg sync.WaitGroup
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go c.dcChats.poll(pctx, 20*time.Millisecond)
	for i := range c.o.chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			onDiscord := c.o.discord && i%2 == 1
			chat := int64(20000 + i)
			for k := range perChat(i) {
				var m *benchMsg
				if onDiscord {
					m = c.dcChats.inject(chat, k, clusterText(c.o.mix, k, benchMark(chat, k)))
				} else {
					m = c.rig.injectText(chat, k, clusterText(c.o.mix, k, benchMark(chat, k)))
				}
				sent.Add(1)
				wctx, cancel := context.WithTimeout(ctx, c.o.msgWait)
				err := waitAll(wctx, []*benchMsg{m})
				cancel()
				if err != nil {
					return // lost: the rest of this chat is not sent
				}
				answered.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	start := time.Now()
	stopProgress := benchProgress(stderr, false, func() string {
		return fmt.Sprintf("reef-bench cluster: %d/%d answered, %.1fs", answered.Load(), c.o.total, time.Since(start).Seconds())
	})
	defer stopProgress()
	threshold := int64(float64(c.o.total) * c.o.killAt)
	for kill != nil {
		select {
		case <-done:
			return int(sent.Load())
		case <-time.After(5 * time.Millisecond): // bounded polling of the progress counter
		}
		if answered.Load() >= threshold {
			kill()
			kill = nil
		}
	}
	<-done
	return int(sent.Load())
}

// injectText makes Telegram chat say message i with text (which carries its marker).
func (r *benchRig) injectText(chat int64, i int, text string) *benchMsg {
	mk := benchMark(chat, i)
	m := &benchMsg{chat: chat, done: make(chan struct{})}
	r.mu.Lock()
	r.msgs[mk] = m
	m.injected = time.Now()
	r.mu.Unlock()
	r.tg.UserSays(chat, chat, text)
	return m
}

// doctor runs reef doctor on node n's home and returns whether its database check passed,
// its lines about the database and the other lines it marked as a problem.
func (c *clusterRun) doctor(ctx context.Context, n *clusterNode) (ok bool, database, others []string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.rig.exe, "doctor")
	cmd.Env = benchChildEnv(n.home)
	out, _ := cmd.CombinedOutput() // its exit status counts every check; the database's is read below
	passed, failed := false, false
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.Contains(l, "database:"):
			database = append(database, l)
			passed = passed || strings.HasPrefix(l, "✓")
			failed = failed || !strings.HasPrefix(l, "✓")
		case strings.HasPrefix(l, "✗") || strings.HasPrefix(l, "!"):
			others = append(others, l)
		}
	}
	return passed && !failed, database, others
}
