package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// toolResults returns the results of calls of tool, in order, as the model saw them.
func toolResults(reqs []fake.Request, tool string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range reqs {
		for _, m := range r.Messages {
			if m.Role == messages.RoleTool && m.ToolName == tool && !seen[m.ToolCallID] {
				seen[m.ToolCallID] = true
				out = append(out, m.Content)
			}
		}
	}
	return out
}

func call(id, name, args string) fake.Reply {
	return fake.Reply{ToolCalls: []messages.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

// TestMemoryWalkthrough is issue 17's walkthrough through the real binary: the model
// searches memory (empty), writes memory/preferences.md, and a later search in other words
// finds it with its line range; with the fake's embeddings endpoint (mode hybrid, the
// embeddings request visible at the fake) and with no embedding provider (mode fts). Then
// `reef memory` finds it too, without a gateway.
func TestMemoryWalkthrough(t *testing.T) {
	for _, withEmbed := range []bool{true, false} {
		name := map[bool]string{true: "hybrid", false: "fts"}[withEmbed]
		t.Run(name, func(t *testing.T) {
			srv := newFake(t,
				call("c1", "memory_search", `{"query":"最喜欢的编程语言"}`),
				call("c2", "write", `{"path":"memory/preferences.md","content":"用户目前正在学习 Rust。"}`),
				fake.Reply{Text: "记下了。"},
				call("c3", "memory_search", `{"query":"用户在学什么编程语言"}`),
				fake.Reply{Text: "你在学 Rust。"},
			)
			home := newHome(t)
			if !withEmbed {
				os.MkdirAll(home, 0o700)
				if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte("memory:\n  provider: none\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e := withFake(home, srv)
			res := reef(t, e, "我有没有告诉过你我最喜欢的编程语言？\n我在学什么？\n", "chat")
			if res.code != 0 || !strings.Contains(res.stdout, "你在学 Rust。") {
				t.Fatalf("chat: code %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			results := toolResults(srv.Script().Requests(), "memory_search")
			if len(results) != 2 {
				t.Fatalf("the model saw %d memory_search results, want 2", len(results))
			}
			provider := map[bool]string{true: `"provider":"openai","model":"text-embedding-3-small"`, false: `"provider":"none","model":""`}[withEmbed]
			wantFirst := `{"results":[],` + provider + `,"citations":"auto","mode":"` + name + `"}`
			if !strings.Contains(results[0], wantFirst) || !strings.Contains(results[0], "<<<UNTRUSTED") {
				t.Errorf("first search:\n%s\nwant %s, wrapped as untrusted data", results[0], wantFirst)
			}
			var second struct {
				Results []struct {
					Path               string
					StartLine, EndLine int
					Citation           string
				}
				Mode string
			}
			body := results[1][strings.Index(results[1], "{") : strings.LastIndex(results[1], "}")+1]
			if err := json.Unmarshal([]byte(body), &second); err != nil {
				t.Fatalf("second search %q: %v", results[1], err)
			}
			if len(second.Results) == 0 || second.Results[0].Path != "memory/preferences.md" || second.Results[0].StartLine != 1 ||
				second.Results[0].EndLine != 1 || second.Mode != name {
				t.Errorf("second search: %s, want memory/preferences.md lines 1-1 in mode %s", body, name)
			}
			embeds := srv.Script().Embeddings().Requests()
			if withEmbed {
				if len(embeds) == 0 || string(embeds[0].Body) != `{"input":["最喜欢的编程语言"],"model":"text-embedding-3-small"}` {
					t.Errorf("embeddings requests %+v, want the first query alone first", embeds)
				}
			} else if len(embeds) != 0 {
				t.Errorf("provider none sent %d embeddings requests", len(embeds))
			}
			for _, r := range embeds {
				if strings.Contains(string(r.Body), canary) {
					t.Error("the API key is in an embeddings request body")
				}
			}

			// The CLI, without a gateway: the same index.
			before := len(embeds)
			res = reef(t, e, "", "memory", "search", "Rust", "-json")
			if res.code != 0 || !strings.Contains(res.stdout, `"path":"memory/preferences.md"`) || !strings.Contains(res.stdout, `"mode":"`+name+`"`) {
				t.Errorf("reef memory search: code %d\n%s\n%s", res.code, res.stdout, res.stderr)
			}
			res = reef(t, e, "", "memory", "status", "-json")
			var st struct{ Files, Chunks, Vectors int }
			if err := json.Unmarshal([]byte(res.stdout), &st); err != nil || st.Files != 1 || st.Chunks != 1 {
				t.Errorf("reef memory status: %s %s (%v)", res.stdout, res.stderr, err)
			}
			if wantVec := map[bool]int{true: 1, false: 0}[withEmbed]; st.Vectors != wantVec {
				t.Errorf("status has %d vectors, want %d", st.Vectors, wantVec)
			}
			if withEmbed {
				// A restart embeds no note again: only the CLI's query was embedded.
				if got := len(srv.Script().Embeddings().Requests()) - before; got != 1 {
					t.Errorf("the CLI made %d embeddings requests, want 1 (its query; the note is in the index)", got)
				}
			}
			noCanary(t, home, srv, res.stdout, res.stderr)
		})
	}
}

// TestMemoryCommandBadInput: usage errors are clear and exit 2.
func TestMemoryCommandBadInput(t *testing.T) {
	srv := newFake(t)
	e := withFake(newHome(t), srv)
	for _, args := range [][]string{{"memory", "search"}, {"memory", "frob"}} {
		res := reef(t, e, "", args...)
		if res.code != 2 || !strings.Contains(res.stderr, "usage:") {
			t.Errorf("reef %v: code %d stderr %q", args, res.code, res.stderr)
		}
	}
	res := reef(t, e, "", "memory", "status", "-agent", "nobody")
	if res.code != 1 || !strings.Contains(res.stderr, `agent "nobody" has no memory index`) {
		t.Errorf("unknown agent: code %d stderr %q", res.code, res.stderr)
	}
}

// TestMemoryCommandThroughGateway: with a gateway holding the database, reef memory works
// through it, and sees a note written while the gateway runs.
func TestMemoryCommandThroughGateway(t *testing.T) {
	srv := newFake(t)
	home := newHome(t)
	e := withFake(home, srv)
	g := startGateway(t, e)
	ws := filepath.Join(home, "workspace")
	os.MkdirAll(filepath.Join(ws, "memory"), 0o755)
	if err := os.WriteFile(filepath.Join(ws, "memory", "2025-03-14.md"), []byte("# Falcon\n\nThe launch moved to Friday.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := reef(t, e, "", "memory", "search", "Falcon", "launch")
	if res.code != 0 || !strings.Contains(res.stdout, "memory/2025-03-14.md#L1-L3") || !strings.Contains(res.stdout, "mode hybrid") {
		t.Fatalf("search through the gateway: code %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = reef(t, e, "", "memory", "index", "--force")
	if res.code != 0 || !strings.Contains(res.stdout, "chunks:     1") {
		t.Fatalf("index --force: code %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}
}

// TestMemorySessionsSource: with sources [memory, sessions], what was said in a past turn is
// found by memory_search, cited by session and turn, with a pasted secret redacted in the
// index as in the transcript (never in a tool result, an embeddings request or the database).
func TestMemorySessionsSource(t *testing.T) {
	srv := newFake(t,
		fake.Reply{Text: "Noted, locker 4471."},
		call("c1", "memory_search", `{"query":"locker code"}`),
		fake.Reply{Text: "It is 4471."},
	)
	home := newHome(t)
	os.MkdirAll(home, 0o700)
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte("memory:\n  sources: [memory, sessions]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := withFake(home, srv)
	res := reef(t, e, "My gym locker code is 4471, and my key is "+canary+"\nWhat is my locker code?\n", "chat")
	if res.code != 0 || !strings.Contains(res.stdout, "It is 4471.") {
		t.Fatalf("chat: code %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	results := toolResults(srv.Script().Requests(), "memory_search")
	if len(results) != 1 {
		t.Fatalf("the model saw %d memory_search results, want 1", len(results))
	}
	body := results[0][strings.Index(results[0], "{") : strings.LastIndex(results[0], "}")+1]
	var got struct {
		Results []struct{ Path, Snippet, Citation, Source, Session string }
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("search %q: %v", results[0], err)
	}
	if len(got.Results) == 0 || got.Results[0].Source != "sessions" || !strings.HasSuffix(got.Results[0].Citation, "#turn-1") ||
		!strings.Contains(got.Results[0].Snippet, "locker code is 4471") || got.Results[0].Session == "" {
		t.Fatalf("search: %s\nwant turn 1 of the conversation", body)
	}
	res = reef(t, e, "", "memory", "status")
	if res.code != 0 || !strings.Contains(res.stdout, "sessions:   1 conversation(s)") {
		t.Errorf("reef memory status: code %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	noCanary(t, home, srv, res.stdout, res.stderr, results[0])
}
