package main

import (
	"strings"
	"testing"
)

// TestDoctorWarnsWhenAnyoneGetsOwnerTools: `reef doctor` warns when a channel lets anyone in
// (groups: ["*"], dmPolicy: open) and guests there may use tools that change the machine,
// naming the tools and the fix; the default grants (read-only for guests) draw no warning;
// a grant naming no tool is a problem.
func TestDoctorWarnsWhenAnyoneGetsOwnerTools(t *testing.T) {
	srv := newFake(t)
	tests := []struct {
		name  string
		extra []string
		code  int
		want  []string
		not   []string
	}{
		{name: "every group, guests read only", extra: []string{`groups: ["*"]`}, not: []string{"lets anyone in"}},
		{name: "every group, exec for its members", extra: []string{`groups: ["*"]`, "groupTools:", `  "*": {allow: [exec]}`},
			want: []string{`! security: channels.telegram: groups: ["*"] lets anyone in, and guests may use exec`,
				"fix: take exec out of the allow lists under channels.telegram (tools, groupTools, toolsBySender)",
				`list group ids in channels.telegram.groups instead of "*"`}},
		{name: "open DMs, file writes for every guest", extra: []string{"dmPolicy: open", `allowFrom: ["*"]`, "tools: {allow: [group:fs]}"},
			want: []string{"! security: channels.telegram: dmPolicy: open lets anyone in, and guests may use apply_patch, edit, write",
				"or let in only whom you know: use dmPolicy: pairing"}},
		{name: "exec for one sender in one listed group is no open door",
			extra: []string{`groups: ["-100123"]`, "groupTools:", `  "-100123": {bySender: {"42": {allow: [exec]}}}`}, not: []string{"lets anyone in"}},
		{name: "the agent's deny wins", extra: []string{`groups: ["*"]`, "tools: {allow: [exec]}"}, not: []string{"lets anyone in"}},
		{name: "an MCP server for every guest", extra: []string{"dmPolicy: open", `allowFrom: ["*"]`, "tools: {allow: [mcp:files]}"},
			want: []string{"! security: channels.telegram: dmPolicy: open lets anyone in, and guests may use files__*"}},
		{name: "some tools of an MCP server for every guest", extra: []string{"dmPolicy: open", `allowFrom: ["*"]`, `tools: {allow: ["mcp:files:read_*"]}`},
			want: []string{"! security: channels.telegram: dmPolicy: open lets anyone in, and guests may use files__*"}},
		{name: "unknown tool", extra: []string{"toolsBySender:", `  "42": {allow: [shell]}`}, code: 1,
			want: []string{`✗ tool grants: channels.telegram.toolsBySender.42: tools: policy: allow list: unknown tool "shell"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := telegramYAML("http://127.0.0.1:9", tt.extra...)
			if strings.Contains(tt.name, "MCP") {
				yaml += "mcp:\n  servers:\n    files: {command: /nonexistent}\n"
			}
			if tt.name == "the agent's deny wins" {
				yaml += "agents:\n  - id: main\n    tools: {deny: [exec]}\n"
			}
			_, e := writeConfig(t, srv, yaml)
			if res := reef(t, e, "", "init"); res.code != 0 {
				t.Fatalf("init: %s", res.stderr)
			}
			res := reef(t, e, "", "doctor")
			if res.code != tt.code {
				t.Errorf("doctor: exit %d, want %d:\n%s%s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("doctor output lacks %q:\n%s", want, res.stdout)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(res.stdout, not) {
					t.Errorf("doctor output has %q:\n%s", not, res.stdout)
				}
			}
		})
	}
}
