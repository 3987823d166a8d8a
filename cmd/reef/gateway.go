package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/internal/procmem"
)

// runGateway runs every configured channel until SIGINT or SIGTERM, then shuts down cleanly:
// runs are stopped, pending writes committed, the database closed.
func runGateway(args []string, stderr io.Writer) int {
	heap := procmem.ReserveHeap(heapReserve) // first: see ReserveHeap
	flags, configPath := commandFlags("gateway", stderr)
	pprofAddr := flags.String("pprof", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060); off by default")
	releaseAfter := flags.Duration("release-after", defaultReleaseAfter,
		"give back start-up's memory (the executable's pages, on Linux) this long after ready; 0 keeps it")
	if flags.Parse(args) != nil {
		return 2
	}
	cfg := configOrExplain(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	log, closeLog, err := newLogger(cfg, false)
	if err != nil {
		fmt.Fprintf(stderr, "reef: logs: %v\n", err)
		return 1
	}
	defer closeLog()
	if cfg.Log.File != "" { // nothing more comes here: say where to look
		fmt.Fprintf(stderr, "reef gateway: logging to %s (log.file)\n", cfg.Log.File)
	}
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr)
		if err != nil {
			fmt.Fprintf(stderr, "reef: -pprof: %v\n", err)
			return 1
		}
		defer stopPprof()
		log.Info().Str("addr", *pprofAddr).Msg("pprof listening")
	}

	// Listen before starting, so a signal during startup still ends in a clean shutdown.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	set, err := newChannels(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	chans := set.chans
	burst := procmem.NewBurst(heap, burstRate, burstHold)
	defer burst.Close()
	rt, err := startRuntime(cfg, log, set, burst.Note)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	stopControl, err := serveControl(cfg, rt, configuredChannels(cfg), log)
	if err != nil {
		log.Warn().Err(err).Msg("no control socket: `reef status` and `reef pairing` will not reach this gateway")
	} else {
		defer stopControl()
	}
	if len(chans) == 0 {
		log.Warn().Msg(noChannels)
		if cfg.Log.File != "" { // the warning went to the file: the person starting reef must see it
			fmt.Fprintf(stderr, "reef gateway: %s\n", noChannels)
		}
	}
	log.Info().Dur("startup", time.Since(processStart)).Int("channels", len(chans)).
		Str("dataDir", cfg.DataDir).Msg("reef gateway ready")
	// The collection that readies the heap reserve waits until start-up is over (the first
	// messages start it sooner).
	collect := time.AfterFunc(collectAfter, func() { heap.Collect(); logReserve(heap, log) })
	defer collect.Stop()

	sig := awaitSignal(sigs, *releaseAfter, log)
	log.Info().Str("signal", sig.String()).Msg("shutting down")
	signal.Stop(sigs)
	rt.stop()
	log.Info().Msg("stopped")
	return 0
}

// noChannels is the gateway's warning when it has no channel to serve.
const noChannels = "no channels configured, so nobody can talk to reef. Add one under `channels:` in the config " +
	"(or set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or FEISHU_APP_ID and FEISHU_APP_SECRET); `reef doctor` shows how. " +
	"To talk to reef in this terminal, run `reef chat` instead."

// A burst, for the heap: burstRate messages within a second arm huge pages in a reserve of
// heapReserve bytes of heap address space, until burstHold after the last such second (see
// procmem.Burst). A thousand conversations waiting for the model hold about 100 MB.
const (
	heapReserve  = 256 << 20
	collectAfter = 200 * time.Millisecond // after ready: the channels have connected
	burstRate    = 100
	burstHold    = time.Minute
)

// logReserve logs the heap reserve once it is made (or why none was).
func logReserve(heap *procmem.HeapReserve, log zerolog.Logger) {
	size, err := heap.Wait()
	switch {
	case err != nil:
		log.Warn().Err(err).Msg("no heap reserve for bursts")
	case size > 0:
		log.Debug().Int64("bytes", size).Msg("heap reserve for bursts made")
	}
}

// defaultReleaseAfter is when, after ready, the gateway gives back start-up's memory: start-up
// and the first connections to the platforms are over by then on an ordinary network. The
// gateway cannot see when a platform connection is up (channels do not report it), and a later
// release only keeps start-up's pages a little longer; pages of a connection made after it
// are simply faulted in when used.
const defaultReleaseAfter = 5 * time.Second

// awaitSignal waits for a signal. On the way, releaseAfter (> 0) after ready, it gives back
// start-up's memory, once.
func awaitSignal(sigs <-chan os.Signal, releaseAfter time.Duration, log zerolog.Logger) os.Signal {
	if releaseAfter > 0 {
		t := time.NewTimer(releaseAfter)
		defer t.Stop()
		select {
		case sig := <-sigs:
			return sig
		case <-t.C:
			releaseStartup(log)
		}
	}
	return <-sigs
}

// releaseStartup drops the executable's pages that start-up faulted in from the resident set
// and from the page cache (procmem). What still runs reads its pages back in, once.
func releaseStartup(log zerolog.Logger) {
	start := time.Now()
	r, err := procmem.ReleaseExecutable()
	if err != nil {
		log.Warn().Err(err).Msg("could not release start-up memory")
		return
	}
	if r.Mappings == 0 { // not Linux
		return
	}
	log.Info().Int64("bytes", r.Bytes).Int("mappings", r.Mappings).Int("kept", r.Kept).
		Bool("evicted", r.Evicted).Dur("took", time.Since(start)).Msg("released start-up memory")
}

// servePprof serves net/http/pprof on its own mux at addr (never on a channel's listener),
// and returns a function that stops it.
func servePprof(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return func() { srv.Close() }, nil
}
