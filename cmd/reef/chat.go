package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/terminal"
	"github.com/reefgw/reef/messages"
)

// runChat talks to the default agent in this terminal. Interactive: Ctrl-C stops the current
// run, a second Ctrl-C (or Ctrl-D) exits. Piped: one message per line, each reply printed to
// stdout, exit 0 at the end of input.
func runChat(args []string, stderr io.Writer) int {
	cfg, log, closeLog, code := startCommand("chat", args, true, stderr)
	if code != 0 {
		return code
	}
	defer closeLog()

	interactive := isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stdout.Fd())
	ag := cfg.Agents[0]
	// The terminal prints the greeting itself, so that it comes before the first prompt.
	greeting := fmt.Sprintf("reef %s — agent %q on %s. Workspace: %s\nCtrl-C stops a run; Ctrl-C twice or Ctrl-D exits.\n",
		version, ag.ID, ag.Model, ag.Workspace)
	gate := make(chan struct{})
	term := terminal.New(terminal.Config{In: os.Stdin, Out: os.Stdout, Info: os.Stderr,
		Interactive: interactive, UserName: os.Getenv("USER"), Greeting: greeting, Gate: gate})
	rt, err := startRuntime(cfg, log, channelSet{chans: map[string]channels.Channel{"terminal": term}})
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	defer rt.stop()

	key := actors.SessionKey(ag.ID, cfg.Session.DMScope, &messages.Inbound{Channel: "terminal",
		ChatID: terminal.ChatID, ChatType: messages.ChatDirect, SenderID: terminal.SenderID})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	runLimit := time.Duration(ag.Limits.TurnTimeoutSeconds)*time.Second + 30*time.Second
	// Lines an earlier run accepted but did not answer are answered first, on their own, so
	// that each new line gets its own reply; then the terminal starts reading.
	if !rt.settle(key, runLimit, 2*time.Second, sigs) {
		return 0
	}
	close(gate)
	var lastInt time.Time
	for {
		select {
		case <-term.Done():
			if !rt.settle(key, runLimit, 2*time.Second, sigs) {
				log.Warn().Msg("exiting before every message was answered and its reply marked sent; reef finishes them on its next start")
			}
			return 0
		case sig := <-sigs:
			if sig == syscall.SIGTERM || !interactive {
				return 0
			}
			if term.Busy() && time.Since(lastInt) > 2*time.Second {
				lastInt = time.Now()
				rt.Cancel(key)
				fmt.Fprintln(stderr, "\n(stopping the run — press Ctrl-C again to exit)")
				continue
			}
			fmt.Fprintln(stderr)
			return 0
		}
	}
}
