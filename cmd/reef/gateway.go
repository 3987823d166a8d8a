package main

import (
	"fmt"
	"github.com/reefgw/reef/internal/logring"
	"github.com/reefgw/reef/internal/openaiapi"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// runGateway runs every configured channel until SIGINT or SIGTERM, then shuts down cleanly:
// runs are stopped, pending writes committed, the database closed.
func runGateway(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("gateway", stderr)
	pprofAddr := flags.String("pprof", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060); off by default")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	cfg := configOrExplain(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	logs := logring.New(cfg.Secrets()...) // the web UI's Logs page
	log, closeLog, err := newLogger(cfg, false, logs)
	if err != nil {
		fmt.Fprintf(stderr, "reef: logs: %v\n", err)
		return 1
	}
	defer closeLog()
	startEnv := envSnapshot() // reloads expand ${NAME} from it: hardenProcess removes the credentials
	if err := hardenProcess(cfg); err != nil {
		log.Warn().Err(err).Msg("commands run by the agent may read reef's environment")
	}
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
	if err := gatewayToken(cfg, log); err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	logs.SetSecrets(cfg.Secrets()...) // with the gateway token now
	chat := addWebChat(cfg, set)
	var api *openaiapi.Channel // the OpenAI-compatible API is a channel; it is served on the web listener
	if !cfg.Gateway.HTTP.Off() {
		api = addAPIChannel(&set, log)
		api.SetMediaClient(mediaClient(cfg)) // image_url parts given by https URL, behind the SSRF guard
	}
	chans := set.chans
	rt, err := startRuntime(cfg, log, set)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	rt.logs = logs
	reloads := newReloader(*configPath, cfg, rt, startEnv, log) // reload.go; before the web UI and control socket use it
	stopWeb, err := startWeb(cfg, *configPath, rt, set, chat, api, log)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		rt.stop()
		return 1
	}
	stopWatch := reloads.watch() // SIGHUP, reef.yaml edited
	stopBackups := startBackups(cfg, rt.store, log)
	stopControl, err := serveControl(cfg, rt, configuredChannels(cfg), log)
	if err != nil {
		log.Warn().Err(err).Msg("no control socket: `reef status` and `reef pairing` will not reach this gateway")
		stopControl = func() {}
	}
	platforms := len(chans) // WebChat and the API are the web listener's, not a chat platform
	if chat != nil {
		platforms--
	}
	if api != nil {
		platforms--
	}
	if platforms == 0 {
		warning := noChannels
		if chat != nil || api != nil { // WebChat and the API still reach the agent
			warning = noPlatform(rt.webURL)
		}
		log.Warn().Msg(warning)
		if cfg.Log.File != "" { // the warning went to the file: the person starting reef must see it
			fmt.Fprintf(stderr, "reef gateway: %s\n", warning)
		}
	}
	log.Info().Dur("startup", time.Since(processStart)).Int("channels", len(chans)).
		Str("dataDir", cfg.DataDir).Msg("reef gateway ready")

	sig := <-sigs
	log.Info().Str("signal", sig.String()).Msg("shutting down")
	signal.Stop(sigs)
	stopWatch()   // no reload while the gateway stops
	stopBackups() // before the store closes
	stopWeb()     // its streams end; no request reaches a stopping runtime
	stopControl() // likewise, and its requests in flight end before the store closes
	rt.stop()
	log.Info().Msg("stopped")
	return 0
}

// noChannels is the gateway's warning when it has no channel to serve.
const noChannels = "no channels configured, so nobody can talk to reef. Add one under `channels:` in the config " +
	"(or set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or FEISHU_APP_ID and FEISHU_APP_SECRET); `reef doctor` shows how. " +
	"To talk to reef in this terminal, run `reef chat` instead."

// noPlatform is the gateway's note when no chat platform is configured but its web UI serves
// WebChat and the API at url.
func noPlatform(url string) string {
	return "no chat platform configured: only WebChat and the API on " + url + " reach the agent. Add a platform under " +
		"`channels:` in the config (or set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN or FEISHU_APP_ID and FEISHU_APP_SECRET); " +
		"`reef doctor` shows how."
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
