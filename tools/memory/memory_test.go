package memory_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	memindex "github.com/reefgw/reef/memory"
	pmem "github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/memory"
)

func setup(t *testing.T) (search, get tools.Tool, env tools.Env) {
	t.Helper()
	ws := t.TempDir()
	write(t, ws, "MEMORY.md", "# About me\n\nI prefer green tea.\nMy ticket is INV-2024-017.\n")
	write(t, ws, "memory/2025-03-14.md", "Met Alice about the Falcon launch.\n")
	write(t, ws, "notes.md", "not a memory file: Falcon\n")
	m := memindex.NewManager(pmem.New(), zerolog.Nop(), memindex.Config{AgentID: "main", Workspace: ws})
	ts := memory.Tools(m)
	return ts[0], ts[1], tools.Env{Workspace: ws, AgentID: "main", Reach: tools.Reach{Owner: true}}
}

func write(t *testing.T, ws, rel, text string) {
	t.Helper()
	p := filepath.Join(ws, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, tool tools.Tool, env tools.Env, args string) tools.Result {
	t.Helper()
	return tools.Run(context.Background(), tool, tools.Call{ID: "c1", Args: []byte(args), Env: env})
}

func TestSearchShape(t *testing.T) {
	search, _, env := setup(t)
	res := run(t, search, env, `{"query":"Falcon launch"}`)
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	var got struct {
		Results []struct {
			Path               string
			StartLine, EndLine int
			Score              float64
			Snippet, Citation  string
		}
		Provider, Model, Citations, Mode string
	}
	if err := json.Unmarshal([]byte(res.Content), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 1 || got.Results[0].Path != "memory/2025-03-14.md" || got.Results[0].Citation != "memory/2025-03-14.md#L1-L1" ||
		got.Mode != "fts" || got.Provider != "none" || got.Citations != "auto" {
		t.Fatalf("got %s", res.Content)
	}
	for _, key := range []string{`"results"`, `"provider"`, `"model"`, `"citations"`, `"mode"`, `"startLine"`, `"endLine"`, `"snippet"`} {
		if !strings.Contains(res.Content, key) {
			t.Errorf("the result lacks %s: %s", key, res.Content)
		}
	}
	// An exact id is found by its words.
	if res := run(t, search, env, `{"query":"INV-2024-017"}`); !strings.Contains(res.Content, `"MEMORY.md"`) {
		t.Errorf("id search: %s", res.Content)
	}
}

func TestSearchBadInput(t *testing.T) {
	search, _, env := setup(t)
	for _, tt := range []struct{ args, want string }{
		{`{"query":""}`, "query is empty"},
		{`{"query":"   "}`, "query is empty"},
		{`{}`, "query is empty"},
		{`{"query":"tea","maxResults":-1}`, "maxResults"},
		{`{"query":"tea","minScore":7}`, "minScore"},
		{`{"query":"tea","extra":1}`, "extra"},
		{`{"query":`, "JSON"},
	} {
		res := run(t, search, env, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s: got %+v, want an error about %q", tt.args, res, tt.want)
		}
	}
	// Capped, not refused: a 100 KB query, maxResults 0 and 10,000.
	huge := strings.Repeat("tea ", 25_000)
	res := run(t, search, env, `{"query":"`+huge+`"}`)
	if res.IsError || !strings.Contains(res.Content, "cut to") {
		t.Errorf("100 KB query: %.200s", res.Content)
	}
	for _, n := range []string{"0", "10000"} {
		if res := run(t, search, env, `{"query":"tea","maxResults":`+n+`}`); res.IsError || !strings.Contains(res.Content, "MEMORY.md") {
			t.Errorf("maxResults %s: %.300s", n, res.Content)
		}
	}
	// An agent without memory gets a clear error.
	if res := run(t, search, tools.Env{Workspace: env.Workspace, AgentID: "other"}, `{"query":"tea"}`); !res.IsError || !strings.Contains(res.Content, "off for this agent") {
		t.Errorf("no index: %+v", res)
	}
}

func TestGet(t *testing.T) {
	_, get, env := setup(t)
	res := run(t, get, env, `{"path":"MEMORY.md","from":3,"lines":1}`)
	if res.IsError || !strings.Contains(res.Content, `"text":"I prefer green tea.\n"`) || !strings.Contains(res.Content, `"more":true`) {
		t.Fatalf("got %s", res.Content)
	}
	if res := run(t, get, env, `{"path":"memory/2025-03-14.md"}`); res.IsError || !strings.Contains(res.Content, "Falcon") {
		t.Fatalf("default range: %s", res.Content)
	}
	os.Symlink("/etc/passwd", filepath.Join(env.Workspace, "memory", "link.md"))
	write(t, env.Workspace, "memory/bin.md", "abc\x00def\n")
	for _, tt := range []struct{ args, want string }{
		{`{"path":"notes.md"}`, "not a memory file"},
		{`{"path":"sessions/agent:main:terminal:direct:local"}`, "past conversation"},
		{`{"path":"../x/MEMORY.md"}`, "escapes"},
		{`{"path":"/etc/passwd"}`, "escapes"},
		{`{"path":"memory/../../etc/passwd.md"}`, "escapes"},
		{`{"path":"memory/link.md"}`, "escapes"},
		{`{"path":"memory/bin.md"}`, "binary"},
		{`{"path":"memory/none.md"}`, "no such file"},
		{`{"path":"MEMORY.md","from":-2}`, "positive"},
		{`{}`, "path is empty"},
	} {
		res := run(t, get, env, tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("%s: got %+v, want an error about %q", tt.args, res, tt.want)
		}
	}
}

// TestGetHugeFile: a 50 MB note with one endless line and many lines is read only as far
// as asked, and capped.
func TestGetHugeFile(t *testing.T) {
	_, get, env := setup(t)
	p := filepath.Join(env.Workspace, "memory", "huge.md")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.Repeat("x", 10<<20) + "\n")
	line := strings.Repeat("y", 99) + "\n"
	f.WriteString(strings.Repeat(line, 400_000))
	f.Close()
	res := run(t, get, env, `{"path":"memory/huge.md","lines":100000}`)
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	if len(res.Content) > memory.MaxTextBytes+4096 || !strings.Contains(res.Content, `"more":true`) {
		t.Fatalf("got %d bytes, want at most about %d and more", len(res.Content), memory.MaxTextBytes)
	}
}

// A guest's run (no owner's standing) searches no note and no other conversation, and
// memory_get reads nothing (#39).
func TestGuestSearchesNoOwnerNotes(t *testing.T) {
	search, get, env := setup(t)
	env.Reach, env.SessionKey = tools.Reach{}, "agent:main:telegram:direct:99"
	res := run(t, search, env, `{"query":"green tea ticket Falcon"}`)
	if res.IsError || strings.Contains(res.Content, "MEMORY.md") || strings.Contains(res.Content, "2025-03-14") ||
		strings.Contains(res.Content, "tea") {
		t.Errorf("a guest's memory_search found the owner's notes: %s", res.Content)
	}
	if res := run(t, get, env, `{"path":"MEMORY.md"}`); !res.IsError || strings.Contains(res.Content, "tea") {
		t.Errorf("a guest's memory_get read MEMORY.md: %+v", res)
	}
	env.Reach.Owner = true
	if res := run(t, search, env, `{"query":"green tea"}`); !strings.Contains(res.Content, "MEMORY.md") {
		t.Errorf("the owner's memory_search found nothing: %s", res.Content)
	}
}
