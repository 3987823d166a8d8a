//go:build unix

package agent

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLoadWorkspaceFIFODoesNotHang(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "AGENTS.md"), 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	ws, err := LoadWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Files) != 0 || len(ws.Warnings) != 1 || !strings.Contains(ws.Warnings[0], "not a regular file") {
		t.Errorf("files %v, warnings %q; want the FIFO skipped with a warning", fileNames(ws), ws.Warnings)
	}
}
