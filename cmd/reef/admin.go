package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/persistence"
)

// configuredChannels names the platform channels the configuration runs.
func configuredChannels(cfg *configs.Config) []string {
	var names []string
	if cfg.Channels.Discord != nil {
		names = append(names, "discord")
	}
	if cfg.Channels.Feishu != nil {
		names = append(names, "feishu")
	}
	if cfg.Channels.Slack != nil {
		names = append(names, "slack")
	}
	if cfg.Channels.Telegram != nil {
		names = append(names, "telegram")
	}
	return names
}

// runStatus shows the running gateway's channels and sessions, or the database's when no
// reef is running.
func runStatus(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("status", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	cfg := runningConfig(*configPath, stderr) // reload_cmd.go
	if cfg == nil {
		return 2
	}
	var st Status
	if c := dialControl(cfg); c != nil {
		var err error
		if st, err = c.status(); err != nil {
			fmt.Fprintf(stderr, "reef status: %v\n", err)
			return 1
		}
	} else {
		store, err := openStore(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "reef status: %v\n", err)
			return 1
		}
		defer store.Close()
		if st, err = readStatus(store, configuredChannels(cfg)); err != nil {
			fmt.Fprintf(stderr, "reef status: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		printJSON(stdout, st)
		return 0
	}
	if st.PID != 0 {
		fmt.Fprintf(stdout, "reef %s running (pid %d) for %s\n", st.Version, st.PID, time.Since(st.Started).Round(time.Second))
	} else {
		fmt.Fprintln(stdout, "reef is not running")
	}
	printStorage(stdout, st.Storage) // storage_status.go; the counts below are unknown meanwhile
	fmt.Fprint(stdout, sessionsLine(st))
	now := time.Now()
	for _, ch := range st.Channels {
		last := "never"
		if !ch.LastEvent.IsZero() {
			last = time.Since(ch.LastEvent).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(stdout, "channel %-9s %s; last message %s, restarts %d\n", ch.Name, termtext.Line(ch.Describe(now)), last, ch.Restarts)
	}
	if n := len(st.DeadLetters); n > 0 {
		d := st.DeadLetters[n-1]
		fmt.Fprintf(stdout, "dead letters: %d (messages that made reef fail twice and were set aside; latest in %s, inbox seq %d: %q)\n",
			n, termtext.ID(d.SessionKey), d.InboxSeq, shorten(d.Inbound.Text, 60))
	}
	if n := len(st.DeadReplies); n > 0 {
		d := st.DeadReplies[n-1]
		fmt.Fprintf(stdout, "dead replies: %d (replies the platform refused for too long, set aside; latest in %s: %q)\n",
			n, termtext.ID(d.SessionKey), shorten(d.Outbound.Text, 60))
	}
	if n := len(st.Approvals); n > 0 {
		fmt.Fprintf(stdout, "exec approvals waiting: %d (oldest %s: %s; `reef security approvals` lists them)\n",
			n, st.Approvals[0].ID, termtext.Quote(shorten(st.Approvals[0].Command, 60)))
	}
	printOutages(stdout, st)
	printReload(stdout, st.Reload)
	for agent, why := range st.HeartbeatsPaused {
		fmt.Fprintf(stdout, "heartbeats of agent %s PAUSED: %s\n", agent, why)
	}
	printPairings(stdout, st.Pairing)
	printOwners(stdout, cfg)
	printWeb(stdout, cfg, st)
	printMedia(stdout, cfg)
	return 0
}

// sessionsLine counts the stored sessions and, while reef runs, the live ones.
func sessionsLine(st Status) string {
	live := ""
	if st.PID != 0 {
		live = fmt.Sprintf(", %d live", st.LiveSessions)
	}
	hint := ""
	if st.Sessions > 0 {
		hint = " (`reef sessions list` shows them)"
	}
	if st.Storage != nil { // a storage outage: nothing could be counted
		return fmt.Sprintf("sessions: stored unknown (the database is unreachable)%s\n", live)
	}
	return fmt.Sprintf("sessions: %d stored%s%s\n", st.Sessions, live, hint)
}

func printPairings(w io.Writer, ps []access.Pairing) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no pending pairing requests")
		return
	}
	fmt.Fprintln(w, "pending pairing requests (approve with `reef pairing approve <channel> <code>`):")
	for _, p := range ps {
		fmt.Fprintf(w, "  %-9s %s  from %s (id %s), expires in %s\n", p.Channel, p.Code, termtext.Quote(p.SenderName), termtext.ID(p.SenderID),
			time.Until(p.Expires).Round(time.Minute))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runPairing lists, approves or denies pairing requests.
func runPairing(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("pairing", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	rest, err := parseInterspersed(flags, args)
	if err != nil {
		return flagExit(err, flags, stdout)
	}
	usage := "usage: reef pairing list | reef pairing approve <channel> <code> | reef pairing deny <channel> <code>  (-json: print JSON)"
	if len(rest) == 0 || (rest[0] != "list" && len(rest) != 3) {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	control := dialControl(cfg)
	if rest[0] == "list" {
		var ps []access.Pairing
		if control != nil {
			st, err := control.status()
			if err != nil {
				fmt.Fprintf(stderr, "reef pairing: %v\n", err)
				return 1
			}
			ps = st.Pairing
		} else {
			store, err := openStore(cfg)
			if err != nil {
				fmt.Fprintf(stderr, "reef pairing: %v\n", err)
				return 1
			}
			st, err := readStatus(store, configuredChannels(cfg))
			store.Close()
			if err != nil {
				fmt.Fprintf(stderr, "reef pairing: %v\n", err)
				return 1
			}
			ps = st.Pairing
		}
		if *asJSON {
			printJSON(stdout, append([]access.Pairing{}, ps...))
			return 0
		}
		printPairings(stdout, ps)
		return 0
	}
	action, channel, code := rest[0], rest[1], strings.ToUpper(rest[2])
	if action != "approve" && action != "deny" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var p access.Pairing
	if control != nil {
		p, err = control.pairing(action, channel, code)
	} else {
		store, oerr := openStore(cfg)
		if oerr != nil {
			fmt.Fprintf(stderr, "reef pairing: %v\n", oerr)
			return 1
		}
		err = store.Update(func(tx persistence.Tx) error {
			var err error
			p, err = decidePairing(tx, action, channel, code)
			return err
		})
		store.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef pairing: %s\n", strings.TrimSpace(err.Error()))
		return 1
	}
	if *asJSON {
		printJSON(stdout, p)
		return 0
	}
	verb := "approved"
	if action == "deny" {
		verb = "denied"
	}
	fmt.Fprintf(stdout, "%s %s (id %s) on %s\n", verb, termtext.Quote(p.SenderName), termtext.ID(p.SenderID), channel)
	return 0
}

// printOutages shows the model endpoints that are down and the messages waiting for them.
func printOutages(w io.Writer, st Status) {
	for _, o := range st.ModelOutages {
		fmt.Fprintf(w, "model %s UNREACHABLE since %s (%s ago)", termtext.ID(o.Provider), o.Since.Local().Format(time.DateTime),
			time.Since(o.Since).Round(time.Second))
		if o.NextProbe.IsZero() {
			fmt.Fprint(w, ", answering again: the waiting messages are running")
		} else {
			fmt.Fprintf(w, ", next probe in %s", max(time.Until(o.NextProbe), 0).Round(time.Second))
		}
		if o.LastError != "" {
			fmt.Fprintf(w, ", last error: %s", termtext.Line(shorten(o.LastError, 120)))
		}
		fmt.Fprintln(w)
	}
	if len(st.WaitingForModel) == 0 {
		return
	}
	n, since := 0, st.WaitingForModel[0].Since
	for _, wm := range st.WaitingForModel {
		n += wm.Messages
		if wm.Since.Before(since) {
			since = wm.Since
		}
	}
	fmt.Fprintf(w, "waiting for the model: %d message(s) in %d conversation(s), since %s (answered when it is back; given up after llm.outageWaitMinutes)\n",
		n, len(st.WaitingForModel), since.Local().Format(time.DateTime))
}
