package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	xterm "golang.org/x/term"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/terminal"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/sessionkey"
)

// runChat talks to the default agent (or the one bindings give the terminal) in this terminal. Interactive: lines are read while a
// run goes (commands are answered at once, other text is queued), Ctrl-C stops the current
// run, Ctrl-C twice (or Ctrl-D) exits. Piped: one message per line, each reply printed to
// stdout; exit 0 at the end of input, or 1 when a run failed (the reason on stderr).
func runChat(args []string, stdout, stderr io.Writer) int {
	cfg, log, closeLog, code := startCommand("chat", args, true, stdout, stderr)
	if cfg == nil {
		return code
	}
	defer closeLog()
	if err := hardenProcess(cfg); err != nil {
		log.Warn().Err(err).Msg("commands run by the agent may read reef's environment")
	}

	interactive := isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stdout.Fd())
	self := &messages.Inbound{Channel: "terminal", ChatID: terminal.ChatID, ChatType: messages.ChatDirect, SenderID: terminal.SenderID}
	ag := cfg.Agents[0] // or the agent a binding gives the terminal
	if id := routes(cfg).Agent(self); id != "" {
		for _, a := range cfg.Agents {
			if a.ID == id {
				ag = a
			}
		}
	}
	// The terminal prints the greeting itself, so that it comes before the first prompt.
	greeting := fmt.Sprintf("reef %s — agent %q on %s. Workspace: %s\n"+
		"Ctrl-C stops a run; Ctrl-C twice or Ctrl-D exits. /help lists the commands.\n",
		version, ag.ID, ag.Model, ag.Workspace)
	gate := make(chan struct{})
	tcfg := terminal.Config{In: os.Stdin, Out: os.Stdout, Info: os.Stderr, Interactive: interactive,
		UserName: os.Getenv("USER"), Greeting: greeting, Gate: gate, Color: interactive && colorOK()}
	if interactive {
		if restore, err := lineMode(int(os.Stdin.Fd())); err == nil {
			defer restore()
			tcfg.LineEditor = true
		} else {
			log.Debug().Err(err).Msg("terminal: no line editor")
		}
	}
	term := terminal.New(tcfg)
	if !interactive { // a script must learn at once that the model is down, not wait for it
		cfg.LLM.OutageWaitMinutes = -1
	}
	rt, err := startRuntime(cfg, log, channelSet{chans: map[string]channels.Channel{"terminal": term}})
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	defer rt.stop()

	key := sessionkey.For(ag.ID, cfg.Session.DMScope, self)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	winch := make(chan os.Signal, 1)
	if tcfg.LineEditor {
		signal.Notify(winch, syscall.SIGWINCH)
		defer signal.Stop(winch)
		winch <- syscall.SIGWINCH // the size now
	}
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
			if term.Failed() && !interactive {
				return 1
			}
			return 0
		case <-winch:
			if w, h, err := xterm.GetSize(int(os.Stdout.Fd())); err == nil {
				term.SetWidth(w, h)
			}
		case sig := <-sigs:
			if sig == syscall.SIGTERM || !interactive {
				term.Leave()
				return 0
			}
			again := time.Since(lastInt) <= 2*time.Second
			lastInt = time.Now()
			switch {
			case again:
				term.Leave()
				return 0
			case term.Busy():
				rt.Cancel(key)
				term.Notice("(stopping the run — press Ctrl-C again to exit)")
			default:
				term.Notice("(press Ctrl-C again to exit, or Ctrl-D)")
			}
		}
	}
}

// colorOK reports whether the terminal may be coloured: not when NO_COLOR is set
// (https://no-color.org) or the terminal is dumb.
func colorOK() bool {
	return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" && os.Getenv("TERM") != ""
}
