package main

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

func TestFakeReply(t *testing.T) {
	user := func(text string) fake.Request {
		return fake.Request{Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "<<<meta>>>\n\n" + text}}}
	}
	if got := fakeReply(user("hello")); !strings.HasPrefix(got.Text, "Hello! I am reef's fake model") || !strings.Contains(got.Text, `say "ls"`) {
		t.Errorf("hello → %+v, want a greeting and the menu", got)
	}
	if got := fakeReply(user("what is this")); !strings.Contains(got.Text, `"what is this"`) || len(got.ToolCalls) != 0 {
		t.Errorf("what is this → %+v, want an echo", got)
	}
	for _, prompt := range []string{
		"[System event — written by the gateway, not by the user]\n[New session] The user just started a new session with /new or /reset. Greet them now",
		"[Scheduled reminder] Your cron job \"x\" fired. It says:\n<<<UNTRUSTED id=1 source=cron>>>\nhi\n<<<END_UNTRUSTED id=1>>>",
	} {
		if got := fakeReply(user(prompt)); strings.Contains(got.Text, "[") || strings.Contains(got.Text, "<<<") || got.Text == "" ||
			strings.Contains(prompt, "[New session]") && !strings.HasPrefix(got.Text, "Hello!") {
			t.Errorf("%.20s → %q, want an answer that echoes none of reef's prompt", prompt, got.Text)
		}
	}
	if got := fakeReply(user("ls")); len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "ls" {
		t.Errorf("ls → %+v, want an ls call", got)
	}
	got := fakeReply(user("write a.txt two words"))
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Arguments != `{"content":"two words\n","path":"a.txt"}` {
		t.Errorf("write → %+v", got)
	}
	got = fakeReply(user("fetch http://127.0.0.1:8000/a"))
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "web_fetch" || got.ToolCalls[0].Arguments != `{"url":"http://127.0.0.1:8000/a"}` {
		t.Errorf("fetch → %+v", got)
	}
	got = fakeReply(user("search reef tides"))
	if len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "web_search" || got.ToolCalls[0].Arguments != `{"query":"reef tides"}` {
		t.Errorf("search → %+v", got)
	}
	done := fakeReply(fake.Request{Messages: []messages.ChatMessage{{Role: messages.RoleTool, ToolName: "ls",
		Content: "<<<UNTRUSTED id=7 source=tool>>>\nAGENTS.md\nnotes.txt\n<<<END_UNTRUSTED id=7>>>"}}})
	if done.Text != `Done. ls said "AGENTS.md" (and 1 more line(s)).` {
		t.Errorf("after a tool result → %q, want a one-line summary without reef's markers", done.Text)
	}
}

func TestFakeReplyCallsAnyTool(t *testing.T) {
	for _, tt := range []struct{ text, name, args string }{
		{`call everything__echo {"message":"hi there"}`, "everything__echo", `{"message":"hi there"}`},
		{`call files__list`, "files__list", `{}`},
	} {
		rep := fakeReply(fake.Request{Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: tt.text}}})
		if len(rep.ToolCalls) != 1 || rep.ToolCalls[0].Name != tt.name || rep.ToolCalls[0].Arguments != tt.args {
			t.Errorf("%s: got %+v", tt.text, rep)
		}
	}
}
