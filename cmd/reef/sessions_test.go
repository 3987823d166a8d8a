package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// The conversation prepareSessions stores under keyAda: 8 entries, a compaction summary after
// entry 4 and a reset after entry 6.
const (
	keyAda     = "agent:main:telegram:direct:42"
	adaEntries = 8
	adaSummary = "SUMMARY: the user is Ada and keeps notes in notes.md"
)

// prepareSessions writes four sessions into home's database, as a gateway would have, and
// closes it. With pending, keyAda has a message waiting in its inbox.
func prepareSessions(t *testing.T, home string, pending bool) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	at := func(min int) time.Time { return now.Add(time.Duration(min-60) * time.Minute) }
	user := func(text string, min int) messages.ChatMessage {
		in := messages.Inbound{Channel: "telegram", ChatID: "42", ChatType: messages.ChatDirect, SenderID: "42",
			SenderName: "Ada", MessageID: "m" + text, Text: text, Time: at(min)}
		return messages.ChatMessage{Role: messages.RoleUser, Content: agent.FormatInbound(in), Time: at(min)}
	}
	reply := func(text string, min int) messages.ChatMessage {
		return messages.ChatMessage{Role: messages.RoleAssistant, Content: text, Time: at(min)}
	}
	call := reply("", 2)
	call.ToolCalls = []messages.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path": "notes.md"}`}}
	result := messages.ChatMessage{Role: messages.RoleTool, ToolCallID: "c1", ToolName: "read",
		Content: "line one of the notes\nsecond line stays hidden", Time: at(2)}
	err = st.Update(func(tx persistence.Tx) error {
		for _, in := range []persistence.SessionInfo{
			{Key: keyAda, AgentID: "main", Channel: "telegram", ChatID: "42", Created: at(0), Updated: at(55), Turns: 4,
				Usage: messages.Usage{InputTokens: 1500, OutputTokens: 200}},
			{Key: "agent:main:telegram:direct:420", AgentID: "main", Channel: "telegram", ChatID: "420", Created: at(0), Updated: at(50)},
			{Key: "agent:main:discord:direct:7", AgentID: "main", Channel: "discord", ChatID: "7", Created: at(0), Updated: at(0)},
			{Key: "agent:ops:telegram:group:-100", AgentID: "ops", Channel: "telegram", ChatID: "-100", Created: at(-3000), Updated: at(-3000)},
		} {
			if err := tx.PutSession(in); err != nil {
				return err
			}
		}
		seqs, err := tx.AppendMessages(keyAda, user("Hi, I'm Ada", 1), call, result, reply("Hello Ada", 3))
		if err != nil {
			return err
		}
		if err := tx.PutSnapshot(keyAda, persistence.Snapshot{Seq: seqs[3], Summary: adaSummary, Created: at(10)}); err != nil {
			return err
		}
		if seqs, err = tx.AppendMessages(keyAda, user("What's my name?", 20), reply("Ada.", 21)); err != nil {
			return err
		}
		if err := tx.PutSnapshot(keyAda, persistence.Snapshot{Seq: seqs[1], Kind: persistence.SnapshotReset, Created: at(30)}); err != nil {
			return err
		}
		if _, err := tx.AppendMessages(keyAda, user("fresh start", 31), reply("Hi again!", 32)); err != nil {
			return err
		}
		if pending {
			_, err = tx.AppendInbox(keyAda, messages.Inbound{Channel: "telegram", ChatID: "42", Text: "are you there?"})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSessionsFromTheDatabase: without a gateway, list, show and export read the database
// read-only, and a key can be shortened.
func TestSessionsFromTheDatabase(t *testing.T) {
	srv := newFake(t)
	home := newHome(t)
	e := withFake(home, srv)
	if res := reef(t, e, "", "sessions", "list"); res.code != 0 || strings.TrimSpace(res.stdout) != "no sessions" {
		t.Errorf("list before reef ever ran = %d %q %q; want \"no sessions\"", res.code, res.stdout, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(home, "data")); err == nil {
		t.Error("reef sessions list created the data directory")
	}
	prepareSessions(t, home, true)
	dbPath := filepath.Join(home, "data", "reef.db")
	before, _ := os.ReadFile(dbPath)
	var outputs []string
	run := func(args ...string) result {
		res := reef(t, e, "", append([]string{"sessions"}, args...)...)
		outputs = append(outputs, res.stdout, res.stderr)
		return res
	}

	list := run("list")
	checkListOrder(t, list, keyAda, "agent:main:telegram:direct:420", "agent:main:discord:direct:7", "agent:ops:telegram:group:-100")
	if !strings.Contains(list.stdout, "1.5k/200") || !strings.Contains(list.stdout, "(5m ago)") {
		t.Errorf("list lacks the tokens 1.5k/200 or the relative update time of %s:\n%s", keyAda, list.stdout)
	}
	checkListOrder(t, run("list", "-agent", "ops"), "agent:ops:telegram:group:-100")
	checkListOrder(t, run("list", "-channel", "discord"), "agent:main:discord:direct:7")
	limited := run("list", "-limit", "2")
	checkListOrder(t, limited, keyAda, "agent:main:telegram:direct:420")
	if !strings.Contains(limited.stdout, "2 of 4 sessions shown") {
		t.Errorf("list -limit 2 does not say what it left out:\n%s", limited.stdout)
	}
	var rows []sessionRow
	if res := run("list", "-json"); res.code != 0 || json.Unmarshal([]byte(res.stdout), &rows) != nil || len(rows) != 4 {
		t.Fatalf("list -json = %d, %d rows:\n%s%s", res.code, len(rows), res.stdout, res.stderr)
	}
	if rows[0].Key != keyAda || rows[0].Usage.InputTokens != 1500 || rows[0].Live == nil || *rows[0].Live {
		t.Errorf("list -json first row = %+v; want %s, 1500 input tokens, live false", rows[0], keyAda)
	}

	show := run("show", "telegram:direct:42", "-n", "20")
	if show.code != 0 {
		t.Fatalf("show = %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	for _, want := range []string{"session    " + keyAda, "1 inbound to answer", "1 summary, 1 reset",
		"→ read({\"path\":\"notes.md\"})", "← read: line one of the notes", "Hi, I'm Ada", "── earlier conversation summarized ──",
		"── new session ──", "last 8 of 8 entries"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, show.stdout)
		}
	}
	if strings.Contains(show.stdout, "second line") || strings.Contains(show.stdout, "UNTRUSTED") {
		t.Errorf("show prints more than a tool result's first line, or the message metadata:\n%s", show.stdout)
	}
	if short := run("show", keyAda, "-n", "2"); !strings.Contains(short.stdout, "last 2 of 8") || strings.Contains(short.stdout, "Hello Ada") {
		t.Errorf("show -n 2 does not stop at the last two entries:\n%s", short.stdout)
	}
	if res := run("show", "agent:main:telegram"); res.code != 1 || !strings.Contains(res.stderr, "matches 2 sessions") ||
		!strings.Contains(res.stderr, "agent:main:telegram:direct:420") || res.stdout != "" {
		t.Errorf("show with an ambiguous key = %d %q; want the candidates", res.code, res.stderr)
	}
	if res := run("show", "nope", "-json"); res.code != 1 || !strings.Contains(res.stderr, "reef sessions list") || res.stdout != "" {
		t.Errorf("show -json of an unknown key = %d %q %q; want only an error", res.code, res.stdout, res.stderr)
	}
	if res := run("export", "nope"); res.code != 1 || !strings.Contains(res.stderr, "reef sessions list") {
		t.Errorf("export of an unknown key = %d %q; want a pointer to reef sessions list", res.code, res.stderr)
	}

	checkJSONLExport(t, run("export", "direct:42"))
	mdPath := filepath.Join(t.TempDir(), "ada.md")
	if res := run("export", keyAda, "-format", "md", "-o", mdPath); res.code != 0 || !strings.Contains(res.stdout, "exported 8 entries and 2 snapshots") {
		t.Fatalf("export -format md -o = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	checkMarkdownExport(t, mdPath)

	for _, args := range [][]string{{}, {"show"}, {"export", keyAda, "-format", "pdf"}, {"list", "extra"}, {"frobnicate"}} {
		if res := run(args...); res.code != 2 || !strings.Contains(res.stderr, "usage:") {
			t.Errorf("reef sessions %v = %d %q; want 2 and the usage", args, res.code, res.stderr)
		}
	}
	if after, _ := os.ReadFile(dbPath); !bytes.Equal(before, after) {
		t.Error("reef sessions changed the database file")
	}
	noCanary(t, home, nil, outputs...)
}

// TestSessionsThroughTheGateway: while a gateway holds the database, the commands go
// through its control socket.
func TestSessionsThroughTheGateway(t *testing.T) {
	srv := newFake(t)
	home := newHome(t)
	e := withFake(home, srv)
	prepareSessions(t, home, false)
	g := startGateway(t, e)

	list := reef(t, e, "", "sessions", "list")
	checkListOrder(t, list, keyAda, "agent:main:telegram:direct:420", "agent:main:discord:direct:7", "agent:ops:telegram:group:-100")
	checkJSONLExport(t, reef(t, e, "", "sessions", "export", keyAda))
	mdPath := filepath.Join(t.TempDir(), "ada.md")
	if res := reef(t, e, "", "sessions", "export", "direct:42", "-format", "md", "-o", mdPath); res.code != 0 {
		t.Fatalf("export -format md through the gateway = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	checkMarkdownExport(t, mdPath)
	if res := reef(t, e, "", "sessions", "show", "nope"); res.code != 1 || !strings.Contains(res.stderr, "reef sessions list") {
		t.Errorf("show of an unknown key through the gateway = %d %q", res.code, res.stderr)
	}
	st := reef(t, e, "", "status")
	if st.code != 0 || !strings.Contains(st.stdout, "sessions: 4 stored, 0 live") {
		t.Errorf("status = %d; want 4 stored sessions, none live:\n%s%s", st.code, st.stdout, st.stderr)
	}
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	if st := reef(t, e, "", "status"); !strings.Contains(st.stdout, "sessions: 4 stored (") || strings.Contains(st.stdout, "live") {
		t.Errorf("status without a gateway = %q; want stored sessions only", st.stdout)
	}
	noCanary(t, home, srv, list.stdout, list.stderr, g.stderr.String())
}

// checkListOrder checks that a list printed exactly keys, in this order.
func checkListOrder(t *testing.T, res result, keys ...string) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("list = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	var got []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "agent:") {
			got = append(got, f[0])
		}
	}
	if strings.Join(got, " ") != strings.Join(keys, " ") {
		t.Errorf("list shows %v; want %v:\n%s", got, keys, res.stdout)
	}
}

// checkJSONLExport checks a JSONL export of keyAda: a session line, then every stored entry
// and both snapshots, each snapshot right after the entry it covers.
func checkJSONLExport(t *testing.T, res result) {
	t.Helper()
	if res.code != 0 {
		t.Fatalf("export = %d\n%s", res.code, res.stderr)
	}
	var types, kinds []string
	var lastSeq uint64
	for i, line := range strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n") {
		var v struct {
			Type, Kind, Key, Summary string
			Role                     messages.Role
			Seq                      uint64
			ToolCalls                []messages.ToolCall
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not JSON (%v): %s", i+1, err, line)
		}
		types = append(types, v.Type)
		switch v.Type {
		case "message":
			if v.Seq <= lastSeq || v.Role == "" {
				t.Errorf("line %d: seq %d after %d, role %q", i+1, v.Seq, lastSeq, v.Role)
			}
			lastSeq = v.Seq
		case "snapshot":
			if v.Seq != lastSeq {
				t.Errorf("snapshot covering #%d comes after entry #%d", v.Seq, lastSeq)
			}
			kinds = append(kinds, v.Kind+":"+v.Summary)
		case "session":
			if i != 0 || v.Key != keyAda {
				t.Errorf("line %d: session line for %q", i+1, v.Key)
			}
		}
	}
	messagesN := strings.Count(strings.Join(types, " "), "message")
	if messagesN != adaEntries || len(kinds) != 2 || kinds[0] != "summary:"+adaSummary || kinds[1] != "reset:" {
		t.Errorf("export has %d messages (want %d) and snapshots %q (want the summary, then a reset)", messagesN, adaEntries, kinds)
	}
}

// checkMarkdownExport checks the Markdown export of keyAda at path.
func checkMarkdownExport(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v; want 0600", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	md := string(b)
	order := []string{"# Conversation " + keyAda, "## User — Ada", "**→ read**", "## Tool result: read", "Hello Ada",
		"**" + markSummarized + "**", "> " + adaSummary, "What's my name?", "Ada.", "**" + markNewSession + "**", "fresh start", "Hi again!"}
	at := 0
	for _, want := range order {
		i := strings.Index(md[at:], want)
		if i < 0 {
			t.Fatalf("markdown lacks %q after byte %d:\n%s", want, at, md)
		}
		at += i + len(want)
	}
	if strings.Contains(md, "UNTRUSTED") {
		t.Errorf("markdown shows the raw message metadata:\n%s", md)
	}
}
