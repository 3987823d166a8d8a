package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/messages"
)

var known = []string{"read", "write", "edit", "ls", "exec", "web_fetch", "cron", "message", "plan"}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		want        []string // allowed names
		err         string
	}{
		{name: "empty allow is everything", want: []string{"cron", "edit", "exec", "ls", "message", "plan", "read", "web_fetch", "write"}},
		{name: "star", allow: []string{"*"}, deny: []string{"group:runtime"},
			want: []string{"cron", "edit", "ls", "message", "plan", "read", "web_fetch", "write"}},
		{name: "group", allow: []string{"group:fs"}, want: []string{"edit", "ls", "read", "write"}},
		{name: "group members this build lacks are skipped", allow: []string{"group:web"}, want: []string{"web_fetch"}},
		{name: "names and groups", allow: []string{"group:fs", "exec"}, deny: []string{"write"},
			want: []string{"edit", "exec", "ls", "read"}},
		{name: "deny wins over allow", allow: []string{"exec", "read"}, deny: []string{"exec"}, want: []string{"read"}},
		{name: "deny a group from everything", deny: []string{"group:fs", "group:automation"},
			want: []string{"exec", "message", "plan", "web_fetch"}},
		{name: "deny star", deny: []string{"*"}, want: []string{}},
		{name: "unknown group", allow: []string{"group:nope"}, err: `allow list: unknown group "group:nope"; valid groups: group:automation, group:fs,`},
		{name: "unknown tool", deny: []string{"rm"}, err: `deny list: unknown tool "rm"; valid tools: cron, edit, exec,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.allow, tt.deny, known)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Allowed()); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
			for _, n := range known {
				want := false
				for _, w := range tt.want {
					want = want || w == n
				}
				if got := p.Allows(n); got != want {
					t.Errorf("Allows(%q) = %v, want %v", n, got, want)
				}
			}
			if p.Allows("web_search") {
				t.Error("a tool that is not known is allowed")
			}
		})
	}
	if (Policy{}).Allows("read") {
		t.Error("the zero Policy allows a tool")
	}
}

func TestGroups(t *testing.T) {
	want := map[string][]string{
		"group:fs":         {"read", "write", "edit", "ls", "apply_patch"},
		"group:runtime":    {"exec", "process"},
		"group:web":        {"web_fetch", "web_search"},
		"group:memory":     {"memory_search", "memory_get"},
		"group:sessions":   {"sessions_spawn", "sessions_send", "sessions_list", "sessions_history", "sessions_yield", "subagents"},
		"group:automation": {"cron"},
		"group:messaging":  {"message"},
	}
	if diff := cmp.Diff(want, Groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

// stub is a tool that answers with fixed text or error.
type stub struct {
	name string
	res  Result
	err  error
}

func (s stub) Spec() messages.ToolSpec { return messages.ToolSpec{Name: s.name, Description: s.name} }
func (s stub) Run(context.Context, Call) (Result, error) {
	return s.res, s.err
}

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(stub{name: "write"}, stub{name: "exec"}, stub{name: "read"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"exec", "read", "write"}, r.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if tool, ok := r.Get("read"); !ok || tool.Spec().Name != "read" {
		t.Errorf("Get(read) = %v, %v", tool, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
	p, err := NewPolicy([]string{"group:fs"}, nil, r.Names())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Specs(p) {
		got = append(got, s.Name)
	}
	if diff := cmp.Diff([]string{"read", "write"}, got); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}

	for _, bad := range [][]Tool{{stub{name: "a"}, stub{name: "a"}}, {stub{}}, {nil}} {
		if _, err := NewRegistry(bad...); err == nil {
			t.Errorf("NewRegistry(%v) succeeded, want an error", bad)
		}
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		tool stub
		want Result
	}{
		{"result", stub{res: Result{Content: "ok"}}, Result{Content: "ok"}},
		{"error result", stub{res: Result{Content: "exit code 1", IsError: true}}, Result{Content: "exit code 1", IsError: true}},
		{"error", stub{err: errors.New("path is required")}, Result{Content: "path is required", IsError: true}},
		{"error without text", stub{err: errors.New("")}, Result{Content: "tool failed without a message", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Run(context.Background(), tt.tool, Call{}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
