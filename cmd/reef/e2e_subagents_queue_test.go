package main

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2ESubagentQueued: with subagents.maxConcurrent 1, the second of two children waits
// for the first's slot, and `reef sessions show` of the parent, asked of the running gateway,
// shows it queued beside the running one; once the first ends it runs, and the user gets
// one answer.
func TestE2ESubagentQueued(t *testing.T) {
	const owner = int64(500)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		n := len(req.Messages)
		last := req.Messages[n-1]
		switch {
		case strings.Contains(req.Messages[0].Content, "[Sub-agent task]"):
			<-release // both children hold on until the test has looked
			return fake.Reply{Text: "done"}
		case strings.Contains(last.Content, "[Internal event: a sub-agent finished"):
			for i := n - 1; i >= 0 && req.Messages[i].Role != messages.RoleAssistant; i-- {
				if strings.Contains(req.Messages[i].Content, "[Active sub-agents]") {
					return fake.Reply{Text: "NO_REPLY"} // the other one still runs
				}
			}
			return fake.Reply{Text: "both done"}
		case last.Role == messages.RoleTool:
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "y1", Name: "sessions_yield", Arguments: `{}`}}}
		}
		return fake.Reply{ToolCalls: []messages.ToolCall{
			{ID: "s1", Name: "sessions_spawn", Arguments: `{"task":"first","label":"First"}`},
			{ID: "s2", Name: "sessions_spawn", Arguments: `{"task":"second","label":"Second"}`}}}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	yaml := "agents:\n  - id: main\n    subagents: {maxConcurrent: 1}\n" + telegramYAML(tg.URL, `allowFrom: ["500"]`)
	_, e := writeConfig(t, srv, yaml)
	n := newNode(t, e)

	tg.UserSays(owner, owner, "two helpers please")
	var show string
	if !eventually(60*time.Second, func() bool {
		list := reef(t, e, "", "sessions", "list").stdout
		lines := strings.Split(strings.TrimSpace(list), "\n")
		if len(lines) < 2 {
			return false
		}
		show = reef(t, e, "", "sessions", "show", strings.Fields(lines[1])[0]).stdout
		return strings.Contains(show, "— queued") && strings.Contains(show, "— running")
	}) {
		t.Fatalf("reef sessions show never showed one child queued and one running:\n%s\nlogs:\n%s", show, tail(n.logs(), 4000))
	}
	once.Do(func() { close(release) })
	if !eventually(60*time.Second, func() bool { return slices.Contains(tg.Sent(owner), "both done") }) {
		t.Fatalf("no answer: the chat shows %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	n.stop()
	if got := tg.Sent(owner); !slices.Equal(got, []string{"both done"}) {
		t.Errorf("the chat shows %q, want one answer", got)
		for _, req := range script.Requests() {
			var b strings.Builder
			for _, m := range req.Messages {
				b.WriteString(string(m.Role) + ": " + strings.ReplaceAll(m.Content[:min(len(m.Content), 80)], "\n", " ") + "\n")
			}
			t.Logf("request:\n%s", b.String())
		}
	}
	list := strings.Split(strings.TrimSpace(reef(t, e, "", "sessions", "list").stdout), "\n")
	show = reef(t, e, "", "sessions", "show", strings.Fields(list[1])[0]).stdout
	if strings.Count(show, "— completed") != 2 {
		t.Errorf("reef sessions show after both ran:\n%s", show)
	}
}
