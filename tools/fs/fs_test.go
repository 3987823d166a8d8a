package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/tools"
)

// workspace returns a fresh workspace and, beside it, a folder outside it holding secret.txt.
func workspace(t *testing.T) (ws, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(outside, "secret.txt"), "top secret\n")
	return ws, outside
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// args renders tool arguments as the model would send them.
func args(kv ...any) []byte {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

// run calls the tool and fails the test if it does not return within five seconds: a call
// that hangs on a FIFO or a device must fail the test, not stall it.
func run(t *testing.T, tool tools.Tool, ws string, raw []byte) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan tools.Result, 1)
	go func() { done <- tools.Run(ctx, tool, tools.Call{ID: "c1", Args: raw, Env: tools.Env{Workspace: ws}}) }()
	select {
	case res := <-done:
		return res
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return: it hangs", tool.Spec().Name)
		return tools.Result{}
	}
}

func wantOK(t *testing.T, res tools.Result, contains ...string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("got error result %q, want success", res.Content)
	}
	for _, c := range contains {
		if !strings.Contains(res.Content, c) {
			t.Errorf("result %q does not contain %q", res.Content, c)
		}
	}
}

func wantErr(t *testing.T, res tools.Result, contains ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("got success %q, want an error", res.Content)
	}
	for _, c := range contains {
		if !strings.Contains(res.Content, c) {
			t.Errorf("error %q does not contain %q", res.Content, c)
		}
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line%d\n", i)
	}
	return b.String()
}

func TestToolsSpecs(t *testing.T) {
	var names []string
	for _, tool := range Tools(Config{}) {
		spec := tool.Spec()
		names = append(names, spec.Name)
		var schema struct {
			Type       string                    `json:"type"`
			Properties map[string]map[string]any `json:"properties"`
			Additional *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s: parameters are not JSON: %v", spec.Name, err)
		}
		if schema.Type != "object" || schema.Additional == nil || *schema.Additional {
			t.Errorf("%s: got type %q additionalProperties %v, want object and false", spec.Name, schema.Type, schema.Additional)
		}
		props := []string{"path", "file_path"}
		if spec.Name == "apply_patch" {
			props = []string{"input"}
		}
		for _, p := range props {
			if schema.Properties[p]["description"] == "" || schema.Properties[p] == nil {
				t.Errorf("%s: property %q missing or undescribed", spec.Name, p)
			}
		}
		if spec.Description == "" {
			t.Errorf("%s: no description", spec.Name)
		}
	}
	if got, want := strings.Join(names, ","), "read,write,edit,ls,apply_patch"; got != want {
		t.Errorf("got tools %s, want %s", got, want)
	}
}

func TestUnknownArgument(t *testing.T) {
	ws, _ := workspace(t)
	res := run(t, NewRead(Config{}), ws, []byte(`{"path":"a","lines":3}`))
	wantErr(t, res, `"lines"`, "file_path", "limit", "offset", "path")
}
