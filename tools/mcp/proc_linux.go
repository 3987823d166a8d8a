package mcp

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts a stdio server in a process group of its own (killGroup ends all of it)
// that the kernel kills when reef dies, so a kill -9 of reef leaves no server behind.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
