//go:build !windows

package mcp

import (
	"os/exec"
	"syscall"
)

// killGroup kills what is left of a stdio server's process group (an npx wrapper's node
// child, a shell's children) after its session was closed.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// terminate asks a stdio server to exit once closing its stdin did not.
const terminate = syscall.SIGTERM
