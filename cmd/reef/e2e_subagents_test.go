package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
	"github.com/reefgw/reef/subagent"
)

// TestE2ESubagentWalkthrough is issue #16's walkthrough through the real binary and the
// Telegram wire fake: the model makes exactly the calls of the walkthrough; the child runs
// in its own session (its exec curl fails offline), its completion wakes the parent, and the
// user sees one report.
func TestE2ESubagentWalkthrough(t *testing.T) {
	const owner = int64(500)
	const (
		task   = "使用 weather 技能收集北京、上海、广东今天的详细天气信息并总结返回"
		report = "今日天气简报：北京晴，上海小雨，广东多云。"
	)
	has := func(req fake.Request, i int, s string) bool {
		return len(req.Messages) > i && i >= 0 && strings.Contains(req.Messages[i].Content, s)
	}
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		n := len(req.Messages)
		last := req.Messages[n-1]
		switch {
		case has(req, 0, "[Sub-agent task]") && last.Role == messages.RoleTool:
			return fake.Reply{Text: "无法联网获取实时天气（curl 失败）。根据常识：北京晴，上海小雨，广东多云。",
				Usage: messages.Usage{InputTokens: 120, OutputTokens: 40}}
		case has(req, 0, "[Sub-agent task]"):
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "c1", Name: "exec", Arguments: `{"command":"curl -s --max-time 3 https://wttr.in/Beijing"}`}},
				Usage: messages.Usage{InputTokens: 100, OutputTokens: 20}}
		case has(req, n-1, "[Internal event: a sub-agent finished"):
			return fake.Reply{Text: report}
		case last.Role == messages.RoleTool && strings.Contains(last.Content, `"status":"accepted"`):
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "y1", Name: "sessions_yield", Arguments: `{"message":"等待 WeatherCollector 子代理返回天气数据中……"}`}}}
		}
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "s1", Name: "sessions_spawn",
			Arguments: `{"task":"` + task + `","label":"WeatherCollector","runtime":"subagent"}`}}}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	home, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["500"]`))
	n := newNode(t, e)

	tg.UserSays(owner, owner, "帮我写今天的天气简报。用 sessions_spawn 启动一个子代理，label 'WeatherCollector'，任务是收集北京、上海、广东今天的天气并总结；然后调用 sessions_yield 等待结果；再根据结果写报告。")
	if !eventually(60*time.Second, func() bool { return slices.Contains(tg.Sent(owner), report) }) {
		t.Fatalf("no report: the chat shows %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	time.Sleep(time.Second) // anything else the gateway would send has been sent by now
	n.stop()
	if got := tg.Sent(owner); !slices.Equal(got, []string{report}) {
		t.Errorf("the chat shows %q, want only the report", got)
	}
	checkSettled(t, home)

	// reef sessions list shows the child under its parent; show lists the parent's children.
	list := reef(t, e, "", "sessions", "list")
	lines := strings.Split(strings.TrimSpace(list.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "PARENT") || !strings.HasPrefix(lines[1], "agent:main:telegram:") ||
		!strings.HasPrefix(lines[2], "└ agent:main:subagent:") || !strings.HasSuffix(strings.TrimSpace(lines[2]), strings.Fields(lines[1])[0]) {
		t.Errorf("reef sessions list:\n%s", list.stdout)
	}
	asJSON := reef(t, e, "", "sessions", "list", "-json")
	if !strings.Contains(asJSON.stdout, `"parent": "agent:main:telegram:`) && !strings.Contains(asJSON.stdout, `"parent":"agent:main:telegram:`) {
		t.Errorf("reef sessions list -json has no parent field:\n%s", asJSON.stdout)
	}
	show := reef(t, e, "", "sessions", "show", strings.Fields(lines[1])[0])
	if !strings.Contains(show.stdout, "children") || !strings.Contains(show.stdout, "WeatherCollector — completed") {
		t.Errorf("reef sessions show of the parent:\n%s", show.stdout)
	}

	// The parent made exactly the walkthrough's calls; its request after the yield holds one
	// completion with the child's answer inside the untrusted markers.
	var parent []fake.Request
	for _, req := range script.Requests() {
		if !strings.Contains(req.Messages[0].Content, "[Sub-agent task]") {
			parent = append(parent, req)
		}
	}
	if len(parent) != 3 {
		t.Fatalf("the parent made %d model calls, want 3", len(parent))
	}
	var events []string
	for _, m := range parent[2].Messages {
		if strings.Contains(m.Content, "[Internal event: a sub-agent finished") {
			events = append(events, m.Content)
		}
	}
	if len(events) != 1 {
		t.Fatalf("the parent's last request holds %d completion events, want 1", len(events))
	}
	for _, want := range []string{"source: subagent", "session: agent:main:subagent:", "label: WeatherCollector", "status: completed",
		"tokens in 220, out 60", "source=subagent>>>\n无法联网获取实时天气", "<<<END_UNTRUSTED id="} {
		if !strings.Contains(events[0], want) {
			t.Errorf("the completion lacks %q:\n%s", want, events[0])
		}
	}

	// The child: its own session and transcript, with its own exec call; linked to the parent.
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.View(func(r persistence.Reader) error {
		all, err := subagent.All(r)
		if err != nil || len(all) != 1 {
			t.Fatalf("links: %v, %v; want one child", all, err)
		}
		for key, l := range all {
			if l.Label != "WeatherCollector" || l.Status != messages.SubagentCompleted || !strings.HasPrefix(l.Parent, "agent:main:telegram:") {
				t.Errorf("link %+v", l)
			}
			entries, _ := r.Messages(key, 0)
			var calls []string
			for _, e := range entries {
				for _, c := range e.ToolCalls {
					calls = append(calls, c.Name)
				}
			}
			if !slices.Equal(calls, []string{"exec"}) {
				t.Errorf("the child's transcript holds calls %v, want its own exec", calls)
			}
		}
		return nil
	})
}
