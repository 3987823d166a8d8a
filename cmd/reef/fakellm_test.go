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
	if got := fakeReply(user("hello")); !strings.Contains(got.Text, `"hello"`) || len(got.ToolCalls) != 0 {
		t.Errorf("hello → %+v, want an echo", got)
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
	done := fakeReply(fake.Request{Messages: []messages.ChatMessage{{Role: messages.RoleTool, Content: "wrote it"}}})
	if !strings.Contains(done.Text, "wrote it") {
		t.Errorf("after a tool result → %+v", done)
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
