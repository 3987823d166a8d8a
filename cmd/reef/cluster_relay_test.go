package main

import (
	"encoding/json"
	"testing"

	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
)

// TestRelayedSession: the sessions whose connections one node holds are relayed (WebChat,
// the API's named sessions, the terminal, and the owner's direct chats shared across
// channels); other channels' and stateless API sessions are not.
func TestRelayedSession(t *testing.T) {
	for key, want := range map[string]bool{
		"agent:main:webchat:direct:owner":        true,
		"agent:main:openai:direct:ann":           true,
		"agent:main:terminal:direct:owner":       true,
		"agent:main:main":                        true,
		"agent:main:direct:owner":                true,
		"agent:main:openai:stateless:main/x1":    false,
		"agent:main:telegram:direct:42":          false,
		"agent:main:discord:group:7":             false,
		"agent:main:subagent:1b2c":               false,
		"agent:main:telegram:work:direct:42":     false,
		"agent:main:webchat:default:direct:c1f0": true,
		"":                                       false,
	} {
		if got := relayedSession(key); got != want {
			t.Errorf("relayedSession(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestMergeDeltas: adjacent text deltas of one run become one; anything else stays apart.
func TestMergeDeltas(t *testing.T) {
	msg := func(session, run string, kind messages.RunEventKind, text string) cluster.Message {
		b, _ := json.Marshal(messages.RunEvent{Session: session, Run: run, Kind: kind, Text: text})
		return cluster.Message{Kind: relayEvent, Session: session, Data: b}
	}
	prev := msg("s", "r1", messages.RunTextDelta, "Hel")
	if !mergeDeltas(&prev, msg("s", "r1", messages.RunTextDelta, "lo")) {
		t.Fatal("two deltas of one run were not merged")
	}
	var ev messages.RunEvent
	if err := json.Unmarshal(prev.Data, &ev); err != nil || ev.Text != "Hello" || ev.Kind != messages.RunTextDelta {
		t.Fatalf("merged %+v, %v; want the delta Hello", ev, err)
	}
	for name, next := range map[string]cluster.Message{
		"another run":     msg("s", "r2", messages.RunTextDelta, "x"),
		"another session": msg("t", "r1", messages.RunTextDelta, "x"),
		"a tool start":    msg("s", "r1", messages.RunToolStart, ""),
		"a reply":         {Kind: relaySend, Session: "s", Data: json.RawMessage(`{}`)},
	} {
		if p := prev; mergeDeltas(&p, next) {
			t.Errorf("%s was merged into a delta", name)
		}
	}
}
