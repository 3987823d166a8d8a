package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/messages"
)

// `reef events` follows the running gateway's run events over the control socket: the
// gateway streams them as JSON lines (GET /events?session=KEY), one event a line, for as
// long as the client stays. The stream is for watching: a client that reads too slowly
// loses events and is told how many (events.lost).

// eventsBuffer is how many events the gateway holds for one follower before it loses some.
const eventsBuffer = 1024

// serveEvents streams bus's events to one follower until it leaves or the bus closes.
func serveEvents(bus *events.Bus) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming is not supported", http.StatusInternalServerError)
			return
		}
		sub := bus.Subscribe(r.URL.Query().Get("session"), eventsBuffer)
		defer sub.Close()
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		flusher.Flush() // the follower knows it is subscribed
		enc := json.NewEncoder(w)
		for {
			select {
			case <-r.Context().Done():
				return
			case ev, ok := <-sub.Events():
				if !ok {
					return
				}
				if enc.Encode(ev) != nil {
					return
				}
				flusher.Flush()
			}
		}
	}
}

func runEvents(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("events", stderr)
	session := flags.String("session", "", "follow only this session key (reef sessions list shows them)")
	asJSON := flags.Bool("json", false, "print each event as one JSON line (JSONL)")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "reef events: unexpected argument %q\n", flags.Arg(0))
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	c := dialControl(cfg)
	if c == nil {
		fmt.Fprintln(stderr, "reef events: reef is not running (start it with reef gateway)")
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := c.followEvents(ctx, *session, func(line []byte) error {
		if *asJSON {
			_, err := fmt.Fprintf(stdout, "%s\n", line)
			return err
		}
		var ev messages.RunEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("bad event from the gateway: %w", err)
		}
		_, err := io.WriteString(stdout, formatEvent(ev, *session == ""))
		return err
	}, func() {
		what := "every session"
		if *session != "" {
			what = termtext.Line(*session)
		}
		fmt.Fprintf(stderr, "reef events: following %s (Ctrl-C to stop)\n", what)
	})
	switch {
	case ctx.Err() != nil:
		return 0 // Ctrl-C
	case err == nil:
		fmt.Fprintln(stderr, "reef events: the gateway stopped")
		return 0
	}
	fmt.Fprintf(stderr, "reef events: %v\n", err)
	return 1
}

// followEvents calls line for each event line the gateway streams, after calling ready once
// the stream is open, until ctx ends, the gateway closes the stream (nil) or line fails.
func (c *controlClient) followEvents(ctx context.Context, session string, line func([]byte) error, ready func()) error {
	q := url.Values{}
	if session != "" {
		q.Set("session", session)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://reef/events?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: c.http.Transport} // no timeout: the stream lasts
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("events: %s", strings.TrimSpace(string(b)))
	}
	ready()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if err := line(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("events: %w", err)
	}
	return nil
}

// formatEvent is one event as the live view shows it: time, session (when following all),
// and a short line; a plan shows one line per step. Text from outside is made safe for a
// terminal.
func formatEvent(ev messages.RunEvent, withSession bool) string {
	head := ev.Time.Local().Format("15:04:05") + " "
	if withSession && ev.Session != "" {
		head += termtext.Line(ev.Session) + " "
	}
	line := func(s string) string { return head + termtext.Line(s) + "\n" }
	switch ev.Kind {
	case messages.RunStart:
		if ev.Goal != "" {
			return line("goal: " + ev.Goal)
		}
		return line("run started")
	case messages.RunTextDelta:
		return line("says: " + textLine(ev.Text, 100))
	case messages.RunToolStart:
		return line("→ " + ev.Summary)
	case messages.RunToolEnd:
		if ev.Status == messages.ToolEndStopped { // stopped with its run (Ctrl-C, /stop), not failed
			return line(fmt.Sprintf("■ %s stopped (%d ms)", ev.Name, ev.MS))
		}
		mark := "✓"
		if ev.OK == nil || !*ev.OK {
			mark = "✗"
		}
		return line(fmt.Sprintf("%s %s (%d ms)", mark, ev.Name, ev.MS))
	case messages.RunPlanUpdate:
		var b strings.Builder
		title := "plan"
		if ev.Explanation != "" {
			title += ": " + ev.Explanation
		}
		b.WriteString(line(title))
		for _, s := range ev.Steps {
			b.WriteString(line("  " + stepLine(s)))
		}
		return b.String()
	case messages.SubagentStart:
		return line("sub-agent started: " + firstNonBlank(ev.Name, ev.Child))
	case messages.SubagentEnd:
		return line("sub-agent " + firstNonBlank(ev.Name, ev.Child) + " ended: " + ev.Status)
	case messages.ApprovalWait:
		return line("waiting for the owner's approval: " + ev.Summary)
	case messages.RunEnd:
		s := fmt.Sprintf("run ended: %s, %d tokens, %.1f s", ev.Status, ev.Tokens, float64(ev.MS)/1000)
		if ev.Summary != "" {
			s += " — " + ev.Summary
		}
		return line(s)
	case messages.EventsLost:
		return line(fmt.Sprintf("(%d events lost: this view fell behind)", ev.Lost))
	}
	return line(string(ev.Kind))
}

// stepLine is a plan step: [x] done, [>] running, [ ] pending, [!] error.
func stepLine(s messages.PlanStep) string {
	box := map[string]string{messages.StepDone: "[x]", messages.StepRunning: "[>]", messages.StepError: "[!]"}[s.Status]
	if box == "" {
		box = "[ ]"
	}
	out := box + " " + s.Title
	if s.Progress > 0 && s.Status != messages.StepDone {
		out += fmt.Sprintf(" (%d%%)", s.Progress)
	}
	if s.Notes != "" {
		out += " — " + s.Notes
	}
	if s.Error != "" {
		out += " — " + s.Error
	}
	return out
}

// textLine shows a piece of answer text on one line: its first non-blank line, cut at n
// characters, and how many more lines it has.
func textLine(s string, n int) string {
	var lines []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	out := lines[0]
	if r := []rune(out); len(r) > n {
		out = string(r[:n-1]) + "…"
	}
	if len(lines) > 1 {
		out += fmt.Sprintf(" (+%d lines)", len(lines)-1)
	}
	return out
}

func firstNonBlank(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
