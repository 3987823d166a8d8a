package memory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	pmem "github.com/reefgw/reef/persistence/memory"
)

// convo writes messages to a session's transcript and moves its info's Updated to at, as
// the Session actor does when it records a turn.
func convo(t *testing.T, store persistence.Store, agentID, key string, at time.Time, msgs ...messages.ChatMessage) {
	t.Helper()
	err := store.Update(func(tx persistence.Tx) error {
		info, ok, err := tx.Session(key)
		if err != nil {
			return err
		}
		if !ok {
			info = persistence.SessionInfo{Key: key, AgentID: agentID, Created: at}
		}
		info.Updated = at
		if err := tx.PutSession(info); err != nil {
			return err
		}
		for i := range msgs {
			msgs[i].Time = at
		}
		_, err = tx.AppendMessages(key, msgs...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func user(text string) messages.ChatMessage {
	// As the Session stores it: the metadata block first, then what the person wrote.
	return messages.ChatMessage{Role: messages.RoleUser, Content: agent.FormatInbound(messages.Inbound{
		Text: text, SenderID: "4242", SenderName: "Ann", ChatID: "chat-77"})}
}

func assistant(text string, calls ...messages.ToolCall) messages.ChatMessage {
	return messages.ChatMessage{Role: messages.RoleAssistant, Content: text, ToolCalls: calls}
}

func toolResult(text string) messages.ChatMessage {
	return messages.ChatMessage{Role: messages.RoleTool, ToolCallID: "c1", ToolName: "exec", Content: text}
}

func sessionIndex(t *testing.T, store persistence.Store, ws string, e *fakeEmbedder, clock *time.Time) *Index {
	cfg := Config{AgentID: "main", Workspace: ws, Sessions: true}
	if e != nil {
		cfg.Embedder, cfg.Provider, cfg.Model = e, "fake", "fake-embed"
	}
	x := New(cfg, store, zerolog.Nop())
	t.Cleanup(func() { x.Close() })
	x.clock = func() time.Time { return *clock }
	return x
}

// TestSessionsSource: with sources [sessions], memory_search recalls what was said in the
// agent's past conversations (user and assistant text, not tool output, not the message
// metadata, not another agent's), citing the session and the turn.
func TestSessionsSource(t *testing.T) {
	store, ws := pmem.New(), t.TempDir()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	key := "agent:main:telegram:direct:4242"
	convo(t, store, "main", key, now,
		user("hello"), assistant("Hi! How can I help?"),
		user("我们下个月去京都旅行，记得提醒我订酒店"),
		assistant("", messages.ToolCall{ID: "c1", Name: "exec", Arguments: `{"command":"cal"}`}),
		toolResult("zanzibar-tool-output"),
		assistant("好的，我会提醒你预订京都的酒店。"))
	convo(t, store, "other", "agent:other:telegram:direct:1", now, user("the kyoto secret of another agent"))
	x := sessionIndex(t, store, ws, &fakeEmbedder{}, &now)

	r := search(t, x, "京都酒店")
	if len(r.Results) == 0 {
		t.Fatalf("no result for the conversation: %+v", r)
	}
	got := r.Results[0]
	if got.Source != SourceSessions || got.Session != key || got.Turn != 2 || got.Path != SessionPrefix+key ||
		got.Citation != SessionPrefix+key+"#turn-2" || got.StartLine != 3 || got.EndLine != 6 {
		t.Fatalf("got %+v; want turn 2 (messages 3-6) of %s cited", got, key)
	}
	if !strings.Contains(got.Snippet, "User: 我们下个月去京都旅行") || !strings.Contains(got.Snippet, "Assistant: 好的") {
		t.Errorf("snippet %q lacks the user's and the assistant's words", got.Snippet)
	}
	for _, q := range []string{"zanzibar-tool-output", "4242", "chat-77", "kyoto secret"} {
		for _, res := range search(t, x, q).Results {
			if res.Source == SourceSessions {
				t.Errorf("%q found %+v: tool output, metadata and other agents' talk are not indexed", q, res)
			}
		}
	}
	st, err := x.Status(context.Background())
	if err != nil || st.Sessions != 1 || st.Files != 0 || st.Chunks != 2 {
		t.Fatalf("status %+v (err %v), want 1 session of 2 turns and no files", st, err)
	}
}

// TestSessionsIncremental: a new turn indexes only that turn (the last one indexed is cut
// again but its text is embedded already); within SessionsEvery nothing is read; a restart
// embeds nothing; a deleted conversation and turning the source off leave the index.
func TestSessionsIncremental(t *testing.T) {
	store, ws := pmem.New(), t.TempDir()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	key := "agent:main:discord:direct:9"
	for i := range 50 {
		convo(t, store, "main", key, now.Add(time.Duration(i)*time.Second),
			user(fmt.Sprintf("question %d about %s", i, sentence(i))), assistant(fmt.Sprintf("answer %d", i)))
	}
	e := &fakeEmbedder{}
	x := sessionIndex(t, store, ws, e, &now)
	if err := x.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.count() != 50 {
		t.Fatalf("first index embedded %d texts, want 50 (one per turn)", e.count())
	}
	convo(t, store, "main", key, now.Add(time.Minute), user("the platypus plan"), assistant("noted: platypus"))
	if r := search(t, x, "platypus"); len(r.Results) != 0 {
		t.Fatalf("the transcript was read again within SessionsEvery: %+v", r.Results)
	}
	now = now.Add(6 * time.Second)
	before := e.count()
	r := search(t, x, "platypus")
	if len(r.Results) != 1 || r.Results[0].Turn != 51 || r.Results[0].StartLine != 101 {
		t.Fatalf("got %+v, want turn 51 from message 101", r.Results)
	}
	if got := e.count() - before; got != 2 { // the new turn and the query
		t.Fatalf("a new turn embedded %d texts, want 2 (the turn and the query)", got)
	}
	// The last turn grows (an answer recorded later): it is indexed again, under the same number.
	convo(t, store, "main", key, now.Add(time.Minute), assistant("and the wombat too"))
	now = now.Add(6 * time.Second)
	r = search(t, x, "wombat")
	if len(r.Results) != 1 || r.Results[0].Turn != 51 || r.Results[0].EndLine != 103 {
		t.Fatalf("got %+v, want turn 51 up to message 103", r.Results)
	}
	st, _ := x.Status(context.Background())
	if st.Chunks != 51 {
		t.Fatalf("%d chunks, want 51", st.Chunks)
	}
	// A restart embeds nothing.
	e2 := &fakeEmbedder{}
	y := sessionIndex(t, store, ws, e2, &now)
	if err := y.Sync(context.Background()); err != nil || e2.count() != 0 {
		t.Fatalf("after a restart the sync embedded %d texts (err %v)", e2.count(), err)
	}
	// A deleted conversation leaves the index.
	if err := store.Update(func(tx persistence.Tx) error { return tx.DeleteSession(key) }); err != nil {
		t.Fatal(err)
	}
	now = now.Add(6 * time.Second)
	if r := search(t, y, "platypus"); len(r.Results) != 0 {
		t.Fatalf("a deleted conversation is still found: %+v", r.Results)
	}
	// Sources back to [memory]: conversations leave the index.
	convo(t, store, "main", key, now, user("the narwhal"), assistant("ok"))
	now = now.Add(6 * time.Second)
	if r := search(t, y, "narwhal"); len(r.Results) != 1 {
		t.Fatalf("got %+v", r.Results)
	}
	z := New(Config{AgentID: "main", Workspace: ws}, store, zerolog.Nop())
	t.Cleanup(func() { z.Close() })
	if r := search(t, z, "narwhal"); len(r.Results) != 0 {
		t.Fatalf("with sessions off a conversation is found: %+v", r.Results)
	}
	if st, _ := z.Status(context.Background()); st.Sessions != 0 || st.Chunks != 0 {
		t.Fatalf("status %+v, want no sessions left", st)
	}
}

func TestSplitTurns(t *testing.T) {
	at := time.Unix(1700000000, 0)
	var entries []persistence.Entry
	for i, m := range []messages.ChatMessage{
		assistant("left from before"),
		{Role: messages.RoleSystem, Content: "cron: daily summary"},
		assistant(agent.SilentToken),
		user("a"), user("b"), assistant("", messages.ToolCall{ID: "1"}), toolResult("out"), assistant("done"),
		user(strings.Repeat("long ", 20000)),
	} {
		m.Time = at
		entries = append(entries, persistence.Entry{Seq: uint64(i + 1), ChatMessage: m})
	}
	turns := splitTurns(entries)
	want := []struct {
		first, last uint64
		text        string
	}{{1, 1, "Assistant: left from before"}, {2, 3, ""}, {4, 8, "User: a\n\nUser: b\n\nAssistant: done"}, {9, 9, ""}}
	if len(turns) != len(want) {
		t.Fatalf("got %d turns, want %d: %+v", len(turns), len(want), turns)
	}
	for i, w := range want {
		g := turns[i]
		if g.first != w.first || g.last != w.last || (w.text != "" && g.text != w.text) || g.time != at.Unix() {
			t.Errorf("turn %d: got %d-%d %q, want %d-%d %q", i, g.first, g.last, g.text, w.first, w.last, w.text)
		}
	}
	if len(turns[3].text) > maxTurnBytes {
		t.Errorf("a long turn keeps %d bytes, want at most %d", len(turns[3].text), maxTurnBytes)
	}
}
