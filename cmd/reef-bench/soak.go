//go:build linux

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

// soakSample is one measurement of the gateway during a soak.
type soakSample struct {
	AtSeconds  float64 `json:"atSeconds"`
	RSSMB      float64 `json:"rssMB"`
	AnonMB     float64 `json:"anonMB"` // RssAnon: the heap, stacks and runtime
	PSSMB      float64 `json:"pssMB"`  // Pss (smaps_rollup)
	FileMB     float64 `json:"fileMB"` // RssFile: the binary's pages and the mapped database
	DBMB       float64 `json:"dbMB"`   // disk reef.db takes
	HeapMB     float64 `json:"heapMB"` // Go heap in use (HeapInuse)
	KeptMB     float64 `json:"keptMB"` // free heap the runtime keeps (HeapIdle − HeapReleased)
	GoMB       float64 `json:"goMB"`   // all the Go runtime holds from the OS (Sys − HeapReleased)
	Goroutines int     `json:"goroutines"`
	Threads    int     `json:"threads"`
	FDs        int     `json:"fds"`
	CPUSeconds float64 `json:"cpuSeconds"`
	Injected   int     `json:"injected"`
	Answered   int64   `json:"answered"`
	P99Ms      float64 `json:"p99Ms"` // of the messages answered since the previous sample
}

// soakReport is the result of a soak.
type soakReport struct {
	DurationSeconds float64      `json:"durationSeconds"`
	Rate            float64      `json:"rate"`
	Chats           int          `json:"chats"`      // talking at any time
	ChatsInAll      int64        `json:"chatsInAll"` // distinct chats over the run
	Injected        int          `json:"injected"`
	Answered        int64        `json:"answered"`
	Lost            int          `json:"lost"`
	Duplicated      int          `json:"duplicated"`
	CPUMsPerMsg     float64      `json:"cpuMsPerMessage"`
	PeakAnonMB      float64      `json:"peakAnonMB"`    // highest RssAnon sampled
	PeakPSSMB       float64      `json:"peakPssMB"`     // highest Pss sampled
	PeakRSSMB       float64      `json:"peakRssMB"`     // VmHWM (secondary)
	WarmupSeconds   float64      `json:"warmupSeconds"` // samples before this are left out of the growth
	RSSGrowthPct    float64      `json:"rssGrowthPct"`  // mean of the last quarter's samples over the first quarter's
	AnonGrowthPct   float64      `json:"anonGrowthPct"`
	GoGrowthPct     float64      `json:"goGrowthPct"`
	GoroutineGrowth float64      `json:"goroutineGrowthPct"`
	FDGrowthPct     float64      `json:"fdGrowthPct"`
	Samples         []soakSample `json:"samples"`
}

const soakUsage = `reef-bench soak — a steady load on a reef gateway for a long time

Usage:
  reef-bench soak [-reef PATH] [-duration 30m] [-rate 50] [-chats N] [-per-chat 5] [-idle-minutes 1]
                  [-every 10s] [-warmup 3m] [-llm-latency 0s] [-heapprofile PREFIX] [-json]

It samples the gateway's anonymous RSS and PSS (VmRSS as secondary), what the Go runtime holds
from the OS, the Go heap, the database size, goroutines, threads and open files every -every,
and reports their growth (last quarter over first) after the warm-up.

Flags:
`

// runBenchSoak puts a steady load on the gateway for a long time and samples its RSS,
// goroutines (from its pprof endpoint), threads and open files every interval.
func runBenchSoak(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("reef-bench soak", flag.ContinueOnError)
	reefPath := reefFlag(flags)
	duration := flags.Duration("duration", 30*time.Minute, "how long to keep the load on")
	rate := flags.Float64("rate", 50, "messages per second")
	chats := flags.Int("chats", 0, "chats talking at any time, taking turns (default 4 × rate)")
	perChat := flags.Int("per-chat", 5, "messages per chat before it falls silent and a new chat takes its place (0: chats never change)")
	idleMinutes := flags.Int("idle-minutes", 1, "session.idleMinutes of the gateway: silent chats' sessions are unloaded after this (0: reef's default)")
	every := flags.Duration("every", 10*time.Second, "sampling interval")
	warmup := flags.Duration("warmup", 3*time.Minute, "growth leaves out the samples of the first this long (the ramp from an empty process until sessions start unloading)")
	latency := flags.Duration("llm-latency", 0, "the fake LLM waits this long before each answer")
	asJSON := flags.Bool("json", false, "print the report as JSON")
	heapProfile := flags.String("heapprofile", "", "save the gateway's heap profile to `PREFIX`-warmup.pb.gz at the end of the warm-up and PREFIX-end.pb.gz at the end")
	if code, done := parseFlags(flags, args, soakUsage, stdout, stderr); done {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "reef-bench soak: unexpected argument %q\n", flags.Arg(0))
		return 2
	}
	if *rate <= 0 || *duration <= 0 || *every <= 0 {
		fmt.Fprintln(stderr, "reef-bench soak: -rate, -duration and -every must be positive")
		return 2
	}
	if *chats <= 0 {
		*chats = max(1, int(4**rate))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "reef-bench soak: %v\n", err)
		return 1
	}
	reef, cleanup, err := resolveReef(*reefPath, stderr)
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	rig, err := newBenchRig(*latency, reef, nil)
	if err != nil {
		return fail(err)
	}
	defer rig.Close()
	rig.sessionIdle = *idleMinutes
	if err := rig.writeConfig(0, false); err != nil {
		return fail(err)
	}
	pprofAddr, err := loopbackAddr()
	if err != nil {
		return fail(err)
	}
	child, err := rig.startGateway(ctx, "-pprof", pprofAddr)
	if err != nil {
		return fail(err)
	}
	defer child.kill()

	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = isTerminal(f)
	}
	rep := soakReport{Rate: *rate, Chats: *chats}
	start := time.Now()
	var mu sync.Mutex
	var injected []*benchMsg
	sample := func(since int) (soakSample, int, error) {
		st, err := readProc(child.pid())
		if err != nil {
			return soakSample{}, since, err
		}
		g, err := goroutines(pprofAddr)
		if err != nil {
			return soakSample{}, since, err
		}
		mem, err := heapStats(pprofAddr)
		if err != nil {
			return soakSample{}, since, err
		}
		mu.Lock()
		msgs := injected
		mu.Unlock()
		var lat []time.Duration
		rig.mu.Lock()
		next := since
		for i := since; i < len(msgs); i++ {
			if msgs[i].replies == 0 {
				break
			}
			lat = append(lat, msgs[i].replied.Sub(msgs[i].injected))
			next = i + 1
		}
		rig.mu.Unlock()
		sortDurations(lat)
		var dbMB float64
		if fi, err := os.Stat(filepath.Join(rig.home, "data", "reef.db")); err == nil {
			dbMB = float64(fi.Size()) / (1 << 20)
			if st, ok := fi.Sys().(*syscall.Stat_t); ok { // the disk it takes: bbolt grows the file ahead of need, sparse
				dbMB = float64(st.Blocks*512) / (1 << 20)
			}
		}
		return soakSample{AtSeconds: time.Since(start).Seconds(), RSSMB: float64(st.rssKB) / 1024, Goroutines: g,
			AnonMB: float64(st.anonKB) / 1024, PSSMB: kbMB(st.pssKB), FileMB: float64(st.fileKB) / 1024, DBMB: dbMB,
			HeapMB: mb(mem["HeapInuse"]), KeptMB: mb(mem["HeapIdle"] - mem["HeapReleased"]),
			GoMB:    mb(mem["Sys"] - mem["HeapReleased"]),
			Threads: st.threads, FDs: st.fds, CPUSeconds: st.cpu.Seconds(), Injected: len(msgs),
			Answered: rig.replied.Load(), P99Ms: ms(percentile(lat, 0.99))}, next, nil
	}
	stopProgress := benchProgress(stderr, tty, func() string {
		mu.Lock()
		n := len(injected)
		mu.Unlock()
		return fmt.Sprintf("reef-bench soak: %.0fs of %.0fs, %d injected, %d answered", time.Since(start).Seconds(), duration.Seconds(), n, rig.replied.Load())
	})
	first, since, err := sample(0)
	if err != nil {
		stopProgress()
		return fail(err)
	}
	rep.Samples = append(rep.Samples, first)

	// Inject at the rate, the chats taking turns; a chat's next message goes in only after
	// its previous one was answered (else it waits for its next turn).
	interval := time.Duration(float64(time.Second) / *rate)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	sampler := time.NewTicker(*every)
	defer sampler.Stop()
	end := time.After(*duration)
	last := make([]*benchMsg, *chats)
	count := make([]int, *chats)
	chatOf := make([]int64, *chats)
	for c := range chatOf {
		chatOf[c] = int64(30000 + c)
	}
	nextChat := int64(30000 + *chats)
	next, skipped := 0, 0
	warmProfiled := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-sampler.C:
			s, n, err := sample(since)
			if err != nil {
				stopProgress()
				return fail(err)
			}
			since = n
			rep.Samples = append(rep.Samples, s)
			if *heapProfile != "" && !warmProfiled && s.AtSeconds >= warmup.Seconds() {
				warmProfiled = true
				if err := saveHeapProfile(pprofAddr, *heapProfile+"-warmup.pb.gz"); err != nil {
					stopProgress()
					return fail(err)
				}
			}
		case <-tick.C:
			c := next
			next = (next + 1) % *chats
			if m := last[c]; m != nil {
				select {
				case <-m.done:
				default:
					skipped++
					continue
				}
			}
			if *perChat > 0 && count[c] == *perChat { // this chat falls silent; a new one talks
				chatOf[c], count[c] = nextChat, 0
				nextChat++
			}
			m := rig.inject(chatOf[c], count[c], false)
			count[c]++
			last[c] = m
			mu.Lock()
			injected = append(injected, m)
			mu.Unlock()
		}
	}
	rep.DurationSeconds = time.Since(start).Seconds()
	rep.ChatsInAll = nextChat - 30000
	// Let the last messages be answered.
	mu.Lock()
	all := injected
	mu.Unlock()
	drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	waitAll(drain, all)
	cancel()
	stopProgress()
	final, _, err := sample(since)
	if err != nil {
		return fail(err)
	}
	if *heapProfile != "" {
		if err := saveHeapProfile(pprofAddr, *heapProfile+"-end.pb.gz"); err != nil {
			return fail(err)
		}
	}
	st, _ := readProc(child.pid())
	stopErr := child.stop()

	lost, dup, _ := rig.tally()
	rep.Injected, rep.Answered, rep.Lost, rep.Duplicated = len(all), rig.replied.Load(), lost, dup
	rep.PeakRSSMB = float64(st.hwmKB) / 1024
	for _, s := range rep.Samples {
		rep.PeakAnonMB, rep.PeakPSSMB = max(rep.PeakAnonMB, s.AnonMB), max(rep.PeakPSSMB, s.PSSMB)
	}
	if len(all) > 0 {
		rep.CPUMsPerMsg = (final.CPUSeconds - first.CPUSeconds) * 1000 / float64(len(all))
	}
	// Growth: the mean of the last quarter of the samples over that of the first quarter,
	// from the end of the warm-up on (the ramp from an empty process to the steady number of
	// live sessions is not growth); all samples under load when the run is too short for that.
	loaded := rep.Samples[1:]
	for i, s := range loaded {
		if s.AtSeconds >= warmup.Seconds() && len(loaded)-i >= 8 {
			loaded = loaded[i:]
			rep.WarmupSeconds = warmup.Seconds()
			break
		}
	}
	q := max(1, len(loaded)/4)
	if len(loaded) >= 2 {
		growth := func(get func(soakSample) float64) float64 {
			var a, b float64
			for _, s := range loaded[:q] {
				a += get(s)
			}
			for _, s := range loaded[len(loaded)-q:] {
				b += get(s)
			}
			if a == 0 {
				return 0
			}
			return (b/a - 1) * 100
		}
		rep.RSSGrowthPct = growth(func(s soakSample) float64 { return s.RSSMB })
		rep.AnonGrowthPct = growth(func(s soakSample) float64 { return s.AnonMB })
		rep.GoGrowthPct = growth(func(s soakSample) float64 { return s.GoMB })
		rep.GoroutineGrowth = growth(func(s soakSample) float64 { return float64(s.Goroutines) })
		rep.FDGrowthPct = growth(func(s soakSample) float64 { return float64(s.FDs) })
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "t\tanon\tPSS\tRSS\tfile\tGo holds\theap\tkept\tdb\tgoroutines\tthreads\tfds\tCPU\tinjected\tanswered\tp99\t")
		for _, s := range rep.Samples {
			fmt.Fprintf(tw, "%.0fs\t%.1fMB\t%.1fMB\t%.1fMB\t%.1fMB\t%.1fMB\t%.1fMB\t%.1fMB\t%.1fMB\t%d\t%d\t%d\t%.1fs\t%d\t%d\t%.0fms\t\n", s.AtSeconds, s.AnonMB, s.PSSMB, s.RSSMB, s.FileMB, s.GoMB, s.HeapMB, s.KeptMB, s.DBMB,
				s.Goroutines, s.Threads, s.FDs, s.CPUSeconds, s.Injected, s.Answered, s.P99Ms)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "soak: %.0fs at %.0f msg/s, %d chats at a time (%d in all): %d injected (%d turns skipped while a chat waited), %d answered, lost %d, duplicated %d, %.2fms CPU/msg, peak anonymous RSS %.1fMB, peak PSS %.1fMB (VmHWM %.1fMB)\n",
			rep.DurationSeconds, rep.Rate, rep.Chats, rep.ChatsInAll, rep.Injected, skipped, rep.Answered, rep.Lost, rep.Duplicated, rep.CPUMsPerMsg, rep.PeakAnonMB, rep.PeakPSSMB, rep.PeakRSSMB)
		from := "the first sample under load"
		if rep.WarmupSeconds > 0 {
			from = fmt.Sprintf("%s of warm-up", time.Duration(rep.WarmupSeconds*float64(time.Second)))
		}
		fmt.Fprintf(stdout, "growth after %s, last quarter over first quarter: anonymous RSS %+.1f%% (VmRSS %+.1f%%, held by the Go runtime %+.1f%%), goroutines %+.1f%%, fds %+.1f%%\n",
			from, rep.AnonGrowthPct, rep.RSSGrowthPct, rep.GoGrowthPct, rep.GoroutineGrowth, rep.FDGrowthPct)
	}
	if stopErr != nil {
		return fail(stopErr)
	}
	if rep.Lost+rep.Duplicated > 0 {
		return 1
	}
	return 0
}
