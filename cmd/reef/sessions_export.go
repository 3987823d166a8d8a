package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// writeExport writes the whole transcript in format ("jsonl" or "md") to the file out (created
// with mode 0600: a transcript is private), or to stdout when out is "".
func writeExport(stdout io.Writer, out, format string, tr transcript) error {
	w, f := stdout, (*os.File)(nil)
	if out != "" {
		var err error
		if f, err = os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	var err error
	if format == "md" {
		err = writeMarkdown(bw, tr)
	} else {
		err = writeJSONL(bw, tr)
	}
	err = cmpErr(err, bw.Flush())
	if f != nil {
		err = cmpErr(err, f.Close())
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if out != "" {
		fmt.Fprintf(stdout, "exported %d entries and %d snapshots of %s to %s\n", len(tr.Entries), len(tr.Snapshots), tr.Info.Key, out)
	}
	return nil
}

// eachInOrder calls entry for every entry and snap for every snapshot, each snapshot right
// after the entry it covers up to (so before the entries the model saw after it).
func eachInOrder(tr transcript, entry func(persistence.Entry) error, snap func(persistence.Snapshot) error) error {
	snaps := tr.Snapshots
	for _, e := range tr.Entries {
		for len(snaps) > 0 && snaps[0].Seq < e.Seq {
			if err := snap(snaps[0]); err != nil {
				return err
			}
			snaps = snaps[1:]
		}
		if err := entry(e); err != nil {
			return err
		}
	}
	for _, s := range snaps {
		if err := snap(s); err != nil {
			return err
		}
	}
	return nil
}

// JSONL lines. The first line describes the session, then entries and snapshots in order.
type (
	exportSession struct {
		Type string `json:"type"` // "session"
		persistence.SessionInfo
	}
	exportEntry struct {
		Type       string              `json:"type"` // "message"
		Seq        uint64              `json:"seq"`
		Role       messages.Role       `json:"role"`
		Time       time.Time           `json:"time,omitzero"`
		Content    string              `json:"content"`
		Reasoning  string              `json:"reasoning,omitempty"`
		ToolCalls  []messages.ToolCall `json:"toolCalls,omitempty"`
		ToolCallID string              `json:"toolCallId,omitempty"`
		ToolName   string              `json:"toolName,omitempty"`
		IsError    bool                `json:"isError,omitempty"`
	}
	exportSnapshot struct {
		Type    string    `json:"type"` // "snapshot"
		Seq     uint64    `json:"seq"`  // the last entry it covers
		Kind    string    `json:"kind"` // "summary" or "reset"
		Summary string    `json:"summary"`
		Created time.Time `json:"created,omitzero"`
	}
)

func writeJSONL(w io.Writer, tr transcript) error {
	enc := json.NewEncoder(w) // one line per value
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportSession{Type: "session", SessionInfo: tr.Info}); err != nil {
		return err
	}
	return eachInOrder(tr, func(e persistence.Entry) error {
		m := e.ChatMessage
		return enc.Encode(exportEntry{Type: "message", Seq: e.Seq, Role: m.Role, Time: m.Time, Content: m.Content,
			Reasoning: m.Reasoning, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError})
	}, func(s persistence.Snapshot) error {
		return enc.Encode(exportSnapshot{Type: "snapshot", Seq: s.Seq, Kind: snapshotKind(s), Summary: s.Summary, Created: s.Created})
	})
}

// Markers of the Markdown export.
const (
	markSummarized = "— earlier conversation summarized —"
	markNewSession = "— new session —"
)

func writeMarkdown(w io.Writer, tr transcript) error {
	in := tr.Info
	fmt.Fprintf(w, "# Conversation %s\n\n", in.Key)
	fmt.Fprintf(w, "- Agent: %s\n- Channel: %s\n", orDash(in.AgentID), where(in))
	if in.Model != "" {
		fmt.Fprintf(w, "- Model: %s\n", in.Model)
	}
	fmt.Fprintf(w, "- Created: %s\n- Updated: %s\n", stamp(in.Created), stamp(in.Updated))
	fmt.Fprintf(w, "- Turns: %d, tokens: %d in / %d out\n- Entries: %d, snapshots: %d\n",
		in.Turns, in.Usage.InputTokens, in.Usage.OutputTokens, len(tr.Entries), len(tr.Snapshots))
	return eachInOrder(tr, func(e persistence.Entry) error {
		return markdownEntry(w, e)
	}, func(s persistence.Snapshot) error {
		if s.Kind == persistence.SnapshotReset {
			_, err := fmt.Fprintf(w, "\n---\n\n**%s**\n\n---\n", markNewSession)
			return err
		}
		_, err := fmt.Fprintf(w, "\n---\n\n**%s**\n\n%s\n\n---\n", markSummarized, quote(s.Summary))
		return err
	})
}

func markdownEntry(w io.Writer, e persistence.Entry) error {
	m := e.ChatMessage
	var b strings.Builder
	switch m.Role {
	case messages.RoleUser:
		p := splitInbound(m.Content)
		heading := "User"
		if p.sender != "" {
			heading += " — " + p.sender
		}
		fmt.Fprintf(&b, "\n## %s · %s · #%d\n\n", heading, stamp(m.Time), e.Seq)
		if p.quoted != "" {
			b.WriteString(quote("Replying to: "+p.quoted) + "\n\n")
		}
		b.WriteString(strings.TrimSpace(p.text) + "\n")
	case messages.RoleTool:
		status := ""
		if m.IsError {
			status = " (error)"
		}
		fmt.Fprintf(&b, "\n## Tool result: %s%s · %s · #%d\n\n", m.ToolName, status, stamp(m.Time), e.Seq)
		b.WriteString(fenced("", m.Content))
	default:
		fmt.Fprintf(&b, "\n## %s · %s · #%d\n\n", roleTitle(m.Role), stamp(m.Time), e.Seq)
		if r := strings.TrimSpace(m.Reasoning); r != "" {
			fmt.Fprintf(&b, "<details><summary>Reasoning</summary>\n\n%s\n\n</details>\n\n", r)
		}
		if c := strings.TrimSpace(m.Content); c != "" {
			b.WriteString(c + "\n")
		}
	}
	for i, c := range m.ToolCalls {
		if i > 0 || strings.TrimSpace(m.Content) != "" || strings.TrimSpace(m.Reasoning) != "" {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**→ %s**\n\n%s", c.Name, fenced("json", indentJSON(c.Arguments)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func roleTitle(r messages.Role) string {
	switch r {
	case messages.RoleAssistant:
		return "Assistant"
	case messages.RoleSystem:
		return "System event"
	}
	return string(r)
}

// stamp is a full local time for the Markdown export.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "time unknown"
	}
	return t.Local().Format("2006-01-02 15:04 MST")
}

// quote turns text into a Markdown block quote.
func quote(s string) string {
	return "> " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n> ")
}

// fenced puts s in a code fence longer than any run of backticks inside it.
func fenced(lang, s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

// indentJSON pretty-prints JSON, leaving anything else as it is.
func indentJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}
