package main

import (
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/reefgw/reef/tools/exec"
)

// controlPeer returns the pid at the other end of a control connection (SO_PEERCRED) and
// why it must not be served, "" to serve it: another user (root aside), or a process reef
// started (exec.Started: another user namespace, reef among its ancestors, exec's marker).
func controlPeer(c net.Conn) (int, string) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, "not a unix socket connection"
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, "its credentials cannot be read: " + err.Error()
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		return 0, "its credentials cannot be read"
	}
	pid := int(cred.Pid)
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return pid, "it runs as another user (uid " + strconv.Itoa(int(cred.Uid)) + ")"
	}
	return pid, exec.Started(pid)
}
