package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// printSessionList prints one line per session, newest first.
func printSessionList(w io.Writer, list sessionList) {
	if list.Total == 0 {
		fmt.Fprintln(w, "no sessions")
		return
	}
	now := time.Now()
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tAGENT\tCHANNEL\tTURNS\tTOKENS IN/OUT\tUPDATED\tLIVE\tPARENT")
	for _, s := range list.Sessions {
		key := termtext.ID(s.Key)
		if s.Parent != "" {
			key = "└ " + key // a sub-agent, listed under its parent
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s/%s\t%s\t%s\t%s\n", key, orDash(s.AgentID), orDash(s.Channel), s.Turns,
			tokens(s.Usage.InputTokens), tokens(s.Usage.OutputTokens), when(s.Updated, now), liveWord(s.Live), orDash(termtext.ID(s.Parent)))
	}
	tw.Flush()
	if n := len(list.Sessions); n < list.Total {
		fmt.Fprintf(w, "%d of %d sessions shown (-limit 0 shows all)\n", n, list.Total)
	}
}

// printSessionDetail prints a session's record, then its last entries.
func printSessionDetail(w io.Writer, d sessionDetail) {
	now, in := time.Now(), d.Info
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-10s %s\n", label, fmt.Sprintf(format, args...))
	}
	line("session", "%s", termtext.ID(in.Key))
	line("agent", "%s", orDash(in.AgentID))
	line("channel", "%s", where(in))
	if in.Model != "" {
		line("model", "%s (set for this session)", termtext.Line(in.Model))
	}
	if in.Think != "" || in.ShowReasoning {
		line("thinking", "%s, reasoning shown: %v", cmp.Or(in.Think, "default"), in.ShowReasoning)
	}
	if q := in.Queue; q != (persistence.QueueSettings{}) {
		line("queue", "%s (debounce %d ms, cap %d, drop %s)", cmp.Or(q.Mode, "default"), q.Debounce, q.Cap, cmp.Or(q.Drop, "default"))
	}
	line("created", "%s", when(in.Created, now))
	if d.Resets > 0 && !in.Started.IsZero() {
		line("restarted", "%s, by the last /new or /reset", when(in.Started, now))
	}
	line("updated", "%s", when(in.Updated, now))
	line("turns", "%d", in.Turns)
	u := in.Usage
	cache := ""
	if u.CacheReadTokens+u.CacheWriteTokens > 0 {
		cache = fmt.Sprintf(" (cache: %d read, %d written)", u.CacheReadTokens, u.CacheWriteTokens)
	}
	line("tokens", "%d in, %d out%s", u.InputTokens, u.OutputTokens, cache)
	line("live", "%s", liveWord(d.Live))
	line("pending", "%d inbound to answer, %d replies to confirm", d.Inbox, d.Outbox)
	if d.Latest != nil {
		line("snapshots", "%s, %s; the latest (%s) covers up to #%d, %s", count(d.Summaries, "summary", "summaries"),
			count(d.Resets, "reset", "resets"), snapshotKind(*d.Latest), d.Latest.Seq, when(d.Latest.Created, now))
	}
	if p := d.Parent; p != nil {
		line("parent", "%s (sub-agent %s, depth %d: %s)", termtext.ID(p.Parent), termtext.Line(p.Name()), p.Depth, p.Status)
	}
	for i, c := range d.Children {
		label := "children"
		if i > 0 {
			label = ""
		}
		why := ""
		if c.Why != "" {
			why = ": " + termtext.Line(c.Why)
		}
		line(label, "%s  %s — %s%s, %s, tokens %d in / %d out", termtext.ID(c.Child), termtext.Line(c.Name()), c.Status, why,
			c.Runtime(now), c.Usage.InputTokens, c.Usage.OutputTokens)
	}
	line("entries", "%d stored", d.Entries)
	if len(d.Recent) == 0 {
		return
	}
	fmt.Fprintf(w, "\nlast %d of %d entries:\n", len(d.Recent), d.Entries)
	layout := clockLayout(d.Recent, now)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	marks := d.Marks
	for _, e := range d.Recent {
		for len(marks) > 0 && marks[0].Seq < e.Seq {
			fmt.Fprintf(tw, "\t\t%s\n", markLine(marks[0]))
			marks = marks[1:]
		}
		t := "-"
		if !e.Time.IsZero() {
			t = e.Time.Local().Format(layout)
		}
		for i, text := range entryLines(e.ChatMessage) {
			if i == 0 {
				fmt.Fprintf(tw, "#%d\t%s\t%s\t%s\n", e.Seq, t, e.Role, text)
			} else {
				fmt.Fprintf(tw, "\t\t\t%s\n", text)
			}
		}
	}
	for _, m := range marks {
		fmt.Fprintf(tw, "\t\t%s\n", markLine(m))
	}
	tw.Flush()
}

func markLine(s persistence.Snapshot) string {
	if s.Kind == persistence.SnapshotReset {
		return "── new session ──"
	}
	return "── earlier conversation summarized ── " + shorten(s.Summary, 80)
}

// clockLayout is the time of day when every entry is from today, else the date too.
func clockLayout(entries []persistence.Entry, now time.Time) string {
	today := now.Local().Format(time.DateOnly)
	for _, e := range entries {
		if !e.Time.IsZero() && e.Time.Local().Format(time.DateOnly) != today {
			return "Jan 02 15:04"
		}
	}
	return "15:04"
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func snapshotKind(s persistence.Snapshot) string {
	if s.Kind == persistence.SnapshotReset {
		return "reset"
	}
	return "summary"
}

// entryLines renders an entry as short lines: its text, then one line per tool call.
func entryLines(m messages.ChatMessage) []string {
	var lines []string
	switch m.Role {
	case messages.RoleUser:
		lines = append(lines, shorten(splitInbound(m.Content).text, 100))
	case messages.RoleTool:
		first, _, _ := strings.Cut(strings.TrimSpace(m.Content), "\n")
		status := ""
		if m.IsError {
			status = " (error)"
		}
		lines = append(lines, shorten("← "+m.ToolName+status+": "+first, 100))
	default:
		if strings.TrimSpace(m.Content) != "" || len(m.ToolCalls) == 0 {
			lines = append(lines, shorten(m.Content, 100))
		}
	}
	for _, c := range m.ToolCalls {
		lines = append(lines, shorten("→ "+c.Name+"("+compactJSON(c.Arguments)+")", 100))
	}
	return lines
}

// compactJSON removes insignificant space from JSON, leaving anything else as it is.
func compactJSON(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// shorten folds whitespace to single spaces and cuts s to at most n runes, marking the cut.
// Terminal controls are removed (see termtext): what it shortens came from outside.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(termtext.Line(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// where names the chat a session last talked in.
func where(in persistence.SessionInfo) string {
	if in.Channel == "" {
		return "-"
	}
	s := in.Channel
	if in.Account != "" && in.Account != "default" {
		s += " (account " + termtext.ID(in.Account) + ")"
	}
	if in.ChatID != "" {
		s += ", chat " + termtext.ID(in.ChatID)
	}
	if in.ThreadID != "" {
		s += ", thread " + termtext.ID(in.ThreadID)
	}
	return s
}

// when is a local time with how long ago it was: "2026-11-22 14:03 (5m ago)".
func when(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04") + " (" + ago(now.Sub(t)) + ")"
}

func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
}

// tokens is a token count for a table: 950, 12.3k, 4.1M.
func tokens(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

func liveWord(live *bool) string {
	switch {
	case live == nil:
		return "?"
	case *live:
		return "yes"
	}
	return "no"
}
