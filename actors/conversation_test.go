package actors_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/anthropic/anthropictest"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/gemini/geminitest"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

const skillMD = `---
name: create-python-script
description: Create a small, runnable Python script in the workspace.
---
# Creating a Python script
1. Look at what is in the workspace first.
2. Write the script with a clear name and a main guard.
`

const listFilesPy = "import os\n\nif __name__ == \"__main__\":\n    for name in sorted(os.listdir(\".\")):\n        print(name)\n"

// wireFakes starts a fake server for each provider wire format and returns a client for it.
var wireFakes = map[string]func(t *testing.T, s *fakellm.Script) providers.Provider{
	"openai": func(t *testing.T, s *fakellm.Script) providers.Provider {
		srv := openaitest.NewServer(s)
		t.Cleanup(srv.Close)
		return openai.New(openai.Config{BaseURL: srv.URL(), APIKey: "sk-canary-openai-0123456789"})
	},
	"anthropic": func(t *testing.T, s *fakellm.Script) providers.Provider {
		srv := anthropictest.NewServer(s)
		t.Cleanup(srv.Close)
		return anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "sk-ant-canary-0123456789"})
	},
	"gemini": func(t *testing.T, s *fakellm.Script) providers.Provider {
		srv := geminitest.NewServer(s)
		t.Cleanup(srv.Close)
		return gemini.New(gemini.Config{BaseURL: srv.URL(), APIKey: "gemini-canary-0123456789"})
	},
}

// TestSkillConversation plays the conversation through the real actor system and a
// real provider client against each wire-format fake: the model reads the skill, lists the
// workspace, writes list_files.py, then answers.
func TestSkillConversation(t *testing.T) {
	for _, name := range []string{"openai", "anthropic", "gemini"} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			skillDir := filepath.Join(ws, "skills", "create-python-script")
			if err := os.MkdirAll(skillDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte(skillMD), 0o644); err != nil {
				t.Fatal(err)
			}
			script := fakellm.NewScript(
				fakellm.Reply{Text: "Let me check the skill.", ToolCalls: []messages.ToolCall{call("c1", "read", map[string]any{"path": "skills/create-python-script/SKILL.md"})}},
				fakellm.Reply{ToolCalls: []messages.ToolCall{call("c2", "ls", map[string]any{"path": "."})}},
				fakellm.Reply{ToolCalls: []messages.ToolCall{call("c3", "write", map[string]any{"path": "list_files.py", "content": listFilesPy})}},
				fakellm.Reply{Text: "I wrote list_files.py: run `python3 list_files.py` to list every file here."},
			)
			h := newHarness(t, harnessOpts{provider: wireFakes[name](t, script), workspace: ws,
				allow: []string{"group:fs"}})

			h.say("42", "Write me a Python script that lists every file in the current directory")
			out := h.reply()
			if !strings.Contains(out.Text, "list_files.py") {
				t.Errorf("reply = %q, want it to mention list_files.py", out.Text)
			}
			got, err := os.ReadFile(filepath.Join(ws, "list_files.py"))
			if err != nil || string(got) != listFilesPy {
				t.Errorf("list_files.py = %q, %v; want the scripted content", got, err)
			}

			entries := h.transcript("42")
			results := checkPairs(t, entries)
			if len(results) != 3 {
				t.Errorf("transcript has %d tool results, want 3", len(results))
			}
			for id, r := range results {
				if r.IsError {
					t.Errorf("tool result %s is an error: %s", id, r.Content)
				}
			}
			if last := entries[len(entries)-1]; last.Role != messages.RoleAssistant || !strings.Contains(last.Content, "list_files.py") {
				t.Errorf("last entry = %+v, want the final answer", last.ChatMessage)
			}

			reqs := script.Requests()
			if len(reqs) != 4 {
				t.Fatalf("provider got %d requests, want 4", len(reqs))
			}
			sys := reqs[0].System
			for _, want := range []string{"<available_skills>", "<name>create-python-script</name>", "skills/create-python-script/SKILL.md"} {
				if !strings.Contains(sys, want) {
					t.Errorf("system prompt lacks %q", want)
				}
			}
			tools := slices.Sorted(slices.Values(reqs[0].Tools))
			if want := []string{"apply_patch", "edit", "ls", "read", "write"}; !slices.Equal(tools, want) {
				t.Errorf("tools offered = %v, want %v (exec is not allowed)", tools, want)
			}
			if strings.Contains(sys, "exec") && strings.Contains(sys, "- exec") {
				t.Errorf("system prompt lists the exec tool, which this agent may not use")
			}
			if !requestHas(reqs[1], "Write the script with a clear name") {
				t.Errorf("second request lacks the SKILL.md content the read tool returned")
			}
			for i, r := range reqs {
				if strings.Contains(string(r.Body), "canary") {
					t.Errorf("request %d body contains the API key", i)
				}
			}
		})
	}
}

func requestHas(r fakellm.Request, text string) bool {
	for _, m := range r.Messages {
		if strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}
