package message

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

// TestMediaIsConfinedToTheWorkspace: media sends a workspace file or an https URL; paths
// outside the workspace (.., absolute, a symlink out), missing files and directories get an
// error the agent can act on, and nothing is sent.
func TestMediaIsConfinedToTheWorkspace(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "chart.png"), []byte("png"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link.txt"))
	os.Mkdir(filepath.Join(ws, "dir"), 0o755)
	for _, c := range []struct {
		media string
		want  []string
	}{
		{"chart.png", []string{"chart.png"}},
		{filepath.Join(ws, "chart.png"), []string{"chart.png"}},
		{"https://example.com/a.png", []string{"https://example.com/a.png"}},
	} {
		m := &messenger{}
		args := `{"action":"send","media":"` + c.media + `"}`
		res, err := New().Run(context.Background(), tools.Call{Args: []byte(args), Env: tools.Env{SessionKey: "s1", Workspace: ws, Runtime: m}})
		if err != nil {
			t.Errorf("%s: %v", c.media, err)
			continue
		}
		if len(m.reqs) != 1 || !reflect.DeepEqual(m.reqs[0].Media, c.want) || !strings.HasPrefix(res.Content, "sent") {
			t.Errorf("%s: requests %+v (%q), want media %v", c.media, m.reqs, res.Content, c.want)
		}
	}
	for _, c := range []struct{ media, want string }{
		{"../" + filepath.Base(outside) + "/secret.txt", "outside your workspace"},
		{filepath.Join(outside, "secret.txt"), "outside your workspace"},
		{"link.txt", "outside your workspace"},
		{"missing.png", "no such file"},
		{"dir", "is a directory"},
		{"file:///etc/passwd", "only workspace paths and http(s) URLs"},
	} {
		m := &messenger{}
		args := `{"action":"send","media":"` + c.media + `"}`
		_, err := New().Run(context.Background(), tools.Call{Args: []byte(args), Env: tools.Env{SessionKey: "s1", Workspace: ws, Runtime: m}})
		if err == nil || !strings.Contains(err.Error(), c.want) || len(m.reqs) != 0 {
			t.Errorf("%s: err %v, sent %+v; want an error with %q and nothing sent", c.media, err, m.reqs, c.want)
		}
	}
}
