package depcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/internal/testutil"
)

// TestImportRules is the test DESIGN.md §1 refers to: it fails on every import in this
// module that breaks a rule.
func TestImportRules(t *testing.T) {
	root := testutil.ModuleRoot(t)
	violations, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// TestBinaryRules: what cmd/reef links holds no test code (testing, httptest, the fakes):
// the benchmark and the fakes live in cmd/reef-bench and the *test packages.
func TestBinaryRules(t *testing.T) {
	violations, err := CheckBinaries(testutil.ModuleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Error(v)
	}
}

// TestCheckBinariesCatchesTestCode: test packages linked by cmd/reef, directly or through
// another package, are reported; a command without rules (cmd/reef-bench) is not checked.
func TestCheckBinariesCatchesTestCode(t *testing.T) {
	root := writeModule(t, map[string]string{
		"cmd/reef/main.go":            "main; os example.com/m/wiring",
		"wiring/w.go":                 "wiring; net/http/httptest testing example.com/m/channels/fake/faketest",
		"channels/fake/faketest/f.go": "faketest; strings",
		"cmd/reef-bench/main.go":      "main; testing",
	})
	got, err := CheckBinaries(root)
	if err != nil {
		t.Fatal(err)
	}
	var deps []string
	for _, v := range got {
		if v.File != "cmd/reef" {
			t.Errorf("violation outside cmd/reef: %v", v)
		}
		deps = append(deps, v.Import)
	}
	want := []string{"example.com/m/channels/fake/faketest", "net/http/httptest", "testing"}
	for _, w := range want {
		if !strings.Contains(strings.Join(deps, " "), w) {
			t.Errorf("CheckBinaries did not report %s: %v", w, got)
		}
	}
	for _, d := range deps {
		if _, ok := stdTestInternals[d]; ok {
			t.Errorf("reported %s, which every program links", d)
		}
	}
}

func TestTestCode(t *testing.T) {
	for dep, want := range map[string]bool{
		"testing": true, "testing/fstest": true, "net/http/httptest": true,
		"github.com/reefgw/reef/channels/telegram/telegramtest": true,
		"internal/testlog": false, "internal/synctest": false,
		"net/http": false, "github.com/reefgw/reef/providers/fake": false, "github.com/x/testingtools": false,
	} {
		if got := testCode(dep); got != want {
			t.Errorf("testCode(%s) = %v, want %v", dep, got, want)
		}
	}
}

// writeModule creates a module example.com/m in a temp dir. files maps a slash path to
// "package name; import paths...".
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26\n"
	for name, body := range files {
		if strings.HasSuffix(name, ".go") {
			pkg, imps, _ := strings.Cut(body, ";")
			var b strings.Builder
			fmt.Fprintf(&b, "package %s\n\nimport (\n", pkg)
			for _, imp := range strings.Fields(imps) {
				fmt.Fprintf(&b, "\t_ %q\n", imp)
			}
			b.WriteString(")\n")
			body = b.String()
		}
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCheckCatchesViolations(t *testing.T) {
	const (
		m  = "example.com/m/"
		pa = "github.com/asynkron/protoactor-go/actor"
	)
	root := writeModule(t, map[string]string{
		"messages/chat.go":                 "messages; fmt " + m + "providers",
		"messages/chat_test.go":            "messages; testing github.com/google/go-cmp/cmp",
		"messages/ext_test.go":             "messages_test; " + m + "messages",
		"providers/openai/c.go":            "openai; " + pa + " " + m + "providers/anthropic " + m + "providers/sse " + m + "providers " + m + "messages",
		"providers/openai/c_test.go":       "openai; " + m + "providers/fake " + m + "providers/anthropic/anthropictest " + m + "persistence/storetest",
		"providers/openai/openaitest/s.go": "openaitest; " + m + "providers/gemini",
		"providers/gemini/g.go":            "gemini; " + m + "providers/internal/reqbody " + m + "providers/internal/reqbody/reqbodytest",
		"providers/internal/reqbody/r.go":  "reqbody; " + m + "messages " + m + "providers/openai",
		"tools/exec/e.go":                  "exec; " + m + "actors " + m + "tools " + m + "channels/telegram",
		"persistence/storetest/s.go":       "storetest; " + m + "persistence " + m + "persistence/memory",
		"configs/c.go":                     "configs; " + m + "actors",
		"agent/a.go":                       "agent; strings " + m + "messages " + m + "tools " + m + "agent/skills",
		"agent/skills/s.go":                "skills; " + m + "agent",
		"internal/testutil/t.go":           "testutil; " + pa + " " + m + "actors",
		"actors/session.go":                "actors; " + pa + " " + m + "agent " + m + "cmd/reef",
		"actors/session_test.go":           "actors_test; " + m + "actors " + m + "internal/testutil",
		"actors/timer.go":                  "actors; " + m + "tools " + m + "tools/cron " + m + "schedule " + m + "persistence",
		"actors/timer_test.go":             "actors_test; " + m + "tools/cron " + m + "providers/fake " + m + "persistence/bolt",
		"schedule/job.go":                  "schedule; time " + m + "messages " + m + "persistence " + m + "tools " + m + "persistence/bolt github.com/x/y",
		"schedule/job_test.go":             "schedule; testing github.com/google/go-cmp/cmp " + m + "persistence/memory " + m + "tools/cron",
		"access/access.go":                 "access; slices " + m + "messages " + m + "actors " + pa,
		"sessionkey/k.go":                  "sessionkey; strings " + m + "messages " + m + "agent",
		"cmd/reef/main.go":                 "main; " + pa + " " + m + "actors " + m + "cmd/reef/internal",
		"vendor/x/x.go":                    "x; " + m + "actors",
		"providers/testdata/x.go":          "x; " + m + "actors",
		".hidden/x.go":                     "x; " + m + "actors",
		"nested/go.mod":                    "module example.com/nested\n",
		"nested/x.go":                      "x; " + m + "actors",
		"README.md":                        "not go",
	})
	got, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, v := range got {
		lines = append(lines, v.String())
	}
	const policy = "access, routing, schedule, sessionkey and streaming import only messages, persistence and the standard library"
	want := []string{
		"access/access.go: imports example.com/m/actors (only cmd imports actors or cmd)",
		"access/access.go: imports github.com/asynkron/protoactor-go/actor (only actors, cmd and internal/testutil import protoactor)",
		"actors/session.go: imports example.com/m/cmd/reef (only cmd imports actors or cmd)",
		"actors/timer.go: imports example.com/m/tools/cron (actors imports no plugin)",
		"agent/a.go: imports example.com/m/tools (agent imports no reef package but messages)",
		"configs/c.go: imports example.com/m/actors (agent, providers, tools, channels, persistence and configs never import actors)",
		"internal/testutil/t.go: imports example.com/m/actors (only cmd imports actors or cmd)",
		"messages/chat.go: imports example.com/m/providers (messages imports only the standard library)",
		"messages/chat_test.go: imports github.com/google/go-cmp/cmp (messages imports only the standard library)",
		"persistence/storetest/s.go: imports example.com/m/persistence/memory (a plugin never imports a sibling plugin)",
		"providers/internal/reqbody/r.go: imports example.com/m/providers/openai (a plugin never imports a sibling plugin)",
		"providers/openai/c.go: imports github.com/asynkron/protoactor-go/actor (only actors, cmd and internal/testutil import protoactor)",
		"providers/openai/c.go: imports example.com/m/providers/anthropic (a plugin never imports a sibling plugin)",
		"providers/openai/openaitest/s.go: imports example.com/m/providers/gemini (a plugin never imports a sibling plugin)",
		"schedule/job.go: imports example.com/m/tools (" + policy + ")",
		"schedule/job.go: imports example.com/m/persistence/bolt (" + policy + ")",
		"schedule/job.go: imports github.com/x/y (" + policy + ")",
		"schedule/job_test.go: imports example.com/m/tools/cron (" + policy + ")",
		"sessionkey/k.go: imports example.com/m/agent (" + policy + ")",
		"tools/exec/e.go: imports example.com/m/actors (agent, providers, tools, channels, persistence and configs never import actors)",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("Check (-want +got):\n%s", diff)
	}
}

func TestCheckReportsUnparsableFiles(t *testing.T) {
	root := writeModule(t, map[string]string{"messages/broken.go": "messages; fmt"})
	if err := os.WriteFile(filepath.Join(root, "messages", "broken.go"), []byte("package messages\nimport (\"fmt\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(root); err == nil || !strings.Contains(err.Error(), "broken.go") {
		t.Errorf("Check = %v, want an error naming broken.go", err)
	}
}

func TestCheckNeedsGoMod(t *testing.T) {
	if _, err := Check(t.TempDir()); err == nil {
		t.Error("Check of a directory without go.mod succeeded")
	}
}
