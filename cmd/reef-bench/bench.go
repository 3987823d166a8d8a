//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reefgw/reef/providers/fake"
)

const benchUsage = `reef-bench — measure a reef binary against fake platforms and a fake LLM on loopback

Usage:
  reef-bench [-reef PATH] [-scenario all|idle|burst|chats|tools|passivated|subagents|streaming] [-n 200] [-k 20 -m 10 [-at-once]]
             [-streaming off|partial|block|progress]
             [-llm-latency 0s] [-llm-capacity 0] [-queue steer|followup|collect|interrupt] [-max-concurrent N] [-idle-for 3m]
             [-pprof ADDR] [-cpuprofile FILE] [-json]
  reef-bench [-reef PATH] -floor [-n 200] [-llm-latency 0s] [-max-concurrent N]
  reef-bench crash [-reef PATH] [-messages 300 -chats 100 -kills 20]
  reef-bench soak  [-reef PATH] [-duration 30m -rate 50]
  reef-bench cluster -database-url URL [-reef PATH] [-nodes 3 -chats 200 -messages 1000]

Each scenario runs "reef gateway" (the binary given by -reef; default: a reef next to
reef-bench, else one built from ./cmd/reef with go build) as a child process on a temporary
REEF_HOME and measures it from outside: latency from injection to the reply's sendMessage at
the fake, CPU time, and memory from /proc: anonymous RSS (RssAnon, /proc/PID/status) and PSS
(Pss, Pss_Anon, /proc/PID/smaps_rollup), sampled while the scenario runs; VmRSS and VmHWM
only as secondary figures (they count the binary's clean file-backed pages, which the kernel
reclaims by itself). The idle scenario connects Telegram, Discord and Feishu to fakes and
reports the highest anonymous RSS sampled over -idle-for. The passivated scenario sends one
message from each of -n chats (try -n 100000), waits until every conversation was unloaded
(session.idleMinutes 1), and samples the memory of the gateway then. The subagents scenario
makes each of -n chats delegate its message to a sub-agent (sessions_spawn and sessions_yield
in one model call, the child's answer, the parent's answer: three model latencies in a row).
The streaming scenario makes each of -n chats a run with three tool calls (four model calls:
use -llm-latency 500ms for a 2 s model) against a Telegram that refuses with 429 a chat's
second edit within a second, and reports the refusals; -streaming sets the gateway's
channels.telegram.streaming.mode (compare off and progress for the CPU progress costs).

-floor runs the burst against the least a gateway can do instead: reef's own Telegram
channel and model client with nothing in between (no storage, sessions, drafts or typing;
the request of an agent's first turn), in a child "reef-bench floor-gateway". It is the
floor of this machine and of these fakes, which share its cores: what reef takes above it
is reef's.

Flags:
`

// benchOpts are the flags of reef-bench.
type benchOpts struct {
	platform   string // burst: telegram (default) or slack
	n, k, m    int
	atOnce     bool   // chats: every message of a chat sent at once, not each after the previous reply
	strict     bool   // chats: the fake Bot API refuses a chat's second edit within a second (429)
	trace      bool   // chats: print the Bot API sends and edits of the chat with the slowest reply
	floor      bool   // burst: run the floor gateway, not reef gateway
	reef       string // the reef binary
	queueMode  string // session.queue.mode of the gateway ("": reef's default)
	database   string // storage.url of a gateway on PostgreSQL ("": bbolt)
	streaming  string // channels.telegram.streaming.mode of the gateway ("": reef's default)
	llmCap     int
	llmLimit   int // the fake model's own concurrency limit (429 beyond it); 0: none
	latency    time.Duration
	timeout    time.Duration
	pprofAddr  string
	allocs     string // with pprofAddr: the gateway's heap profile before and after the messages, to <allocs>-before/-after.pb.gz
	progress   io.Writer
	tty        bool
	gatewayArg []string
	// idle: the window sampled
	idleFor time.Duration
}

// run is reef-bench: it dispatches to the subcommands, or runs the scenarios.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "crash":
			return runBenchCrash(args[1:], stdout, stderr)
		case "soak":
			return runBenchSoak(args[1:], stdout, stderr)
		case "cluster":
			return runBenchCluster(args[1:], stdout, stderr)
		case floorCommand: // the child of -floor; not in the usage
			return runFloorGateway(args[1:], stdout, stderr)
		case "help":
			fmt.Fprint(stdout, strings.TrimSuffix(benchUsage, "\nFlags:\n"))
			return 0
		}
	}
	flags := flag.NewFlagSet("reef-bench", flag.ContinueOnError)
	scenario := flags.String("scenario", "all", "all (idle, burst, chats, tools) | idle | burst | chats | tools | passivated | subagents | streaming")
	var o benchOpts
	reefPath := reefFlag(flags)
	flags.IntVar(&o.n, "n", 200, "burst, tools and passivated: chats, one message each")
	flags.IntVar(&o.k, "k", 20, "chats: number of chats")
	flags.IntVar(&o.m, "m", 10, "chats: messages per chat, each sent after the previous reply (unless -at-once)")
	flags.BoolVar(&o.atOnce, "at-once", false, "chats: send each chat's messages all at once, as a person typing fast (the queue mode decides how they are answered)")
	flags.BoolVar(&o.strict, "strict", false, "chats: the fake Bot API refuses a chat's second editMessageText within a second with 429, as Telegram may (counted in the report)")
	flags.BoolVar(&o.trace, "trace", false, "chats: print every sendMessage and editMessageText of the chat with the slowest reply, timed from its first message")
	flags.StringVar(&o.platform, "platform", "telegram", "burst: the platform the messages come from: telegram | slack (Socket Mode)")
	flags.StringVar(&o.streaming, "streaming", "", "channels.telegram.streaming.mode of the gateway: off | partial | block | progress (default: reef's, progress)")
	flags.StringVar(&o.database, "database-url", "", "run the gateway on this PostgreSQL database (storage.driver: postgres; give an empty one) instead of bbolt")
	flags.StringVar(&o.queueMode, "queue", "", "session.queue.mode of the gateway: steer | followup | collect | interrupt (default: reef's)")
	flags.DurationVar(&o.latency, "llm-latency", 0, "the fake LLM waits this long before each answer")
	flags.IntVar(&o.llmCap, "max-concurrent", 0, "llm.maxConcurrent of the gateway: the ceiling of its adaptive limit (0: none, reef's default)")
	flags.IntVar(&o.llmLimit, "llm-capacity", 0, "the fake LLM serves this many calls at once and answers 429 with Retry-After (half of -llm-latency) beyond (0: no limit)")
	flags.DurationVar(&o.timeout, "timeout", 3*time.Minute, "bound of each scenario")
	flags.BoolVar(&o.floor, "floor", false, "burst: measure the floor gateway (reef's channel and model client, nothing between) instead of reef")
	flags.StringVar(&o.pprofAddr, "pprof", "", "run the gateway with -pprof ADDR (profile it while the scenario runs)")
	flags.StringVar(&o.allocs, "allocprofile", "", "with -pprof: save the gateway's heap profile (allocations since start) to PREFIX-before.pb.gz before the first message and PREFIX-after.pb.gz after the last reply (go tool pprof -sample_index=alloc_space -base ...)")
	flags.DurationVar(&o.idleFor, "idle-for", 3*time.Minute,
		"idle and passivated: how long to sample memory, every second, once the channels are connected (idle) or every conversation was unloaded (passivated)")
	asJSON := flags.Bool("json", false, "print the results as JSON")
	cpuProfile := flags.String("cpuprofile", "", "write a CPU profile of this process (the fakes) to this file")
	if code, done := parseFlags(flags, args, benchUsage, stdout, stderr); done {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "reef-bench: unexpected argument %q (a subcommand comes first: reef-bench crash -reef PATH ...)\n", flags.Arg(0))
		return 2
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "reef-bench: %v\n", err)
			return 1
		}
		defer stop()
	}
	if o.n <= 0 || o.k <= 0 || o.m <= 0 {
		fmt.Fprintln(stderr, "reef-bench: -n, -k and -m must be positive")
		return 2
	}
	switch o.queueMode {
	case "", "steer", "followup", "collect", "interrupt":
	default:
		fmt.Fprintf(stderr, "reef-bench: -queue %q: want steer, followup, collect or interrupt\n", o.queueMode)
		return 2
	}
	if o.idleFor <= 0 {
		fmt.Fprintln(stderr, "reef-bench: -idle-for must be positive")
		return 2
	}
	if o.pprofAddr != "" {
		o.gatewayArg = []string{"-pprof", o.pprofAddr}
	}
	if o.floor && !flagSet(flags, "scenario") {
		*scenario = "burst" // the only one it measures
	}
	if o.floor && *scenario != "burst" {
		fmt.Fprintln(stderr, "reef-bench: -floor measures the burst scenario only (-scenario burst)")
		return 2
	}
	var names []string
	switch *scenario {
	case "all":
		names = []string{"idle", "burst", "chats", "tools"}
	case "idle", "burst", "chats", "tools", "passivated", "subagents", "streaming":
		names = []string{*scenario}
	default:
		fmt.Fprintf(stderr, "reef-bench: unknown scenario %q\n", *scenario)
		return 2
	}
	reef, cleanup, err := resolveReef(*reefPath, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "reef-bench: %v\n", err)
		return 1
	}
	defer cleanup()
	o.reef = reef
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o.progress = stderr
	if f, ok := stderr.(*os.File); ok {
		o.tty = isTerminal(f)
	}
	var results []benchResult
	failed := false
	for _, name := range names {
		res, err := runScenario(ctx, name, o)
		if err != nil {
			fmt.Fprintf(stderr, "reef-bench: %s: %v\n", name, err)
			return 1
		}
		if res.Lost+res.Duplicated+res.OutOfOrder > 0 {
			failed = true
		}
		results = append(results, res)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(results)
	} else {
		printBench(stdout, results)
	}
	if failed {
		fmt.Fprintln(stderr, "reef-bench: messages were lost, duplicated or answered out of order")
		return 1
	}
	return 0
}

// runScenario runs one scenario on its own rig and gateway process.
func runScenario(ctx context.Context, name string, o benchOpts) (benchResult, error) {
	res := benchResult{Scenario: name, Floor: o.floor, LLMLatencyMs: ms(o.latency)}
	limit := o.timeout
	switch name {
	case "idle":
		limit += o.idleFor
	case "passivated":
		limit += o.idleFor + passivateWithin
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var capacity *fake.Capacity
	if o.llmLimit > 0 {
		capacity = &fake.Capacity{Max: o.llmLimit, RetryAfter: o.latency / 2}
	}
	rig, err := newBenchRig(o.latency, o.reef, capacity)
	if err != nil {
		return res, err
	}
	defer rig.Close()
	rig.queueMode, rig.streaming = o.queueMode, o.streaming
	rig.database = o.database
	res.Streaming = o.streaming
	if name == "streaming" {
		rig.toolsPerRun = 3
		rig.tg.LimitEdits(time.Second)
	}
	if name == "chats" && o.strict {
		rig.tg.LimitEdits(time.Second)
	}
	if name == "passivated" {
		rig.sessionIdle = 1
	}
	rig.subagents = name == "subagents"
	if o.floor {
		if err := rig.useFloor(); err != nil {
			return res, err
		}
	}
	args := o.gatewayArg
	if name == "idle" {
		rig.startPlatforms()
	}
	if o.platform == "slack" {
		rig.startSlack()
		res.Platform = "slack"
	}
	if err := rig.writeConfig(o.llmCap, name == "idle"); err != nil {
		return res, err
	}
	child, err := rig.startGateway(ctx, args...)
	if err != nil {
		return res, err
	}
	defer child.kill()
	if name == "idle" {
		return runIdle(ctx, rig, child, o, res)
	}
	// Measure from the first poll on: the gateway is then fully up.
	if err := waitFor(ctx, 10*time.Second, func() bool { n, _ := rig.pollsSeen(); return n > 0 }); err != nil {
		return res, fmt.Errorf("no getUpdates within 10s of start: %w\n%s", err, child.log.tail())
	}
	if rig.sl != nil {
		if err := waitFor(ctx, 10*time.Second, func() bool { return rig.sl.Connections() > 0 }); err != nil {
			return res, fmt.Errorf("no Socket Mode connection within 10s of start: %w\n%s", err, child.log.tail())
		}
	}
	before, err := readProc(child.pid())
	if err != nil {
		return res, err
	}
	if o.allocs != "" && o.pprofAddr != "" {
		if err := saveHeapProfile(o.pprofAddr, o.allocs+"-before.pb.gz"); err != nil {
			return res, err
		}
	}
	start := time.Now()
	sampler := sampleMem(child.pid(), 100*time.Millisecond)
	var all []*benchMsg
	var mu sync.Mutex
	stopProgress := benchProgress(o.progress, o.tty, func() string {
		mu.Lock()
		n := len(all)
		mu.Unlock()
		return fmt.Sprintf("reef-bench %s: %d injected, %d answered, %.1fs", name, n, rig.replied.Load(), time.Since(start).Seconds())
	})
	var runErr error
	switch name {
	case "burst", "tools", "passivated", "subagents", "streaming":
		res.Chats, res.Messages = o.n, o.n
		for c := range o.n {
			m := rig.inject(int64(10000+c), 0, name == "tools" || name == "streaming")
			mu.Lock()
			all = append(all, m)
			mu.Unlock()
		}
		runErr = waitAll(ctx, all)
	case "chats":
		res.Chats, res.Messages, res.AtOnce, res.QueueMode = o.k, o.k*o.m, o.atOnce, o.queueMode
		if o.atOnce {
			for c := range o.k {
				for i := range o.m {
					m := rig.inject(int64(10000+c), i, false)
					mu.Lock()
					all = append(all, m)
					mu.Unlock()
				}
			}
			runErr = waitAll(ctx, all)
			break
		}
		var wg sync.WaitGroup
		errs := make(chan error, o.k)
		for c := range o.k {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range o.m {
					m := rig.inject(int64(10000+c), i, false)
					mu.Lock()
					all = append(all, m)
					mu.Unlock()
					if err := waitAll(ctx, []*benchMsg{m}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		runErr = <-errs
	}
	after, procErr := readProc(child.pid())
	peaks := sampler()
	if o.allocs != "" && o.pprofAddr != "" {
		if err := saveHeapProfile(o.pprofAddr, o.allocs+"-after.pb.gz"); err != nil {
			fmt.Fprintf(o.progress, "reef-bench: %v\n", err)
		}
	}
	stopProgress()
	var last time.Time
	rig.mu.Lock()
	for _, m := range all {
		if m.replies > 0 && m.replied.After(last) {
			last = m.replied
		}
	}
	rig.mu.Unlock()
	if runErr != nil {
		fmt.Fprintf(o.progress, "reef-bench %s: not every message was answered: %v\n", name, runErr)
	}
	// A moment for duplicates to show, then a clean shutdown.
	time.Sleep(300 * time.Millisecond)
	if procErr == nil {
		if peak, err := readProc(child.pid()); err == nil {
			after.hwmKB = peak.hwmKB
		}
	}
	if name == "passivated" && runErr == nil && procErr == nil {
		p, err := awaitPassivated(ctx, rig, child, o)
		if err != nil {
			return res, err
		}
		res.Passivated = p
	}
	stopErr := child.stop()
	if procErr != nil {
		return res, procErr
	}

	lost, dup, lat := rig.tally()
	res.Lost, res.Duplicated = lost, dup
	if name == "chats" {
		res.OutOfOrder = rig.outOfOrder()
		if o.trace {
			rig.printTrace(o.progress, all)
		}
	}
	if !last.IsZero() {
		res.WallSeconds = last.Sub(start).Seconds()
		res.RepliesPerSec = float64(len(lat)) / res.WallSeconds
	}
	res.P50Ms, res.P95Ms = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.95))
	res.P99Ms, res.MaxMs = ms(percentile(lat, 0.99)), ms(percentile(lat, 1))
	res.MinMs = ms(percentile(lat, 0))
	toModel := rig.toModel()
	res.ToModelP50Ms, res.ToModelP99Ms = ms(percentile(toModel, 0.50)), ms(percentile(toModel, 0.99))
	res.ToModelMaxMs = ms(percentile(toModel, 1))
	cpu := after.cpu - before.cpu
	res.CPUSeconds = cpu.Seconds()
	res.CPUMsPerMsg = ms(cpu) / float64(res.Messages)
	res.PeakRSSMB = float64(after.hwmKB) / 1024
	res.PeakAnonMB, res.PeakPSSMB, res.PeakPssAnonMB = kbMB(peaks.anonKB), kbMB(peaks.pssKB), kbMB(peaks.pssAnonKB)
	res.LLMCalls = rig.llmCalls.Load()
	res.RateLimited = rig.tg.RateLimited()
	rig.mu.Lock()
	res.APICalls = maps.Clone(rig.calls)
	rig.mu.Unlock()
	return res, stopErr
}

// startCPUProfile profiles this process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// waitFor polls cond until it holds, d passes or ctx ends.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond): // bounded polling of the fake's record
		}
	}
	return nil
}

// flagSet reports whether the command line set the flag name.
func flagSet(flags *flag.FlagSet, name string) bool {
	set := false
	flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
