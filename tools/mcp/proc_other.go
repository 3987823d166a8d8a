//go:build !linux && !windows

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts a stdio server in a process group of its own (killGroup ends all of it).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
