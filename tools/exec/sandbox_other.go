//go:build !linux

package exec

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// SandboxMain exists only on Linux.
func SandboxMain(args []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reef exec-sandbox: only on Linux")
	return 126
}

// LandlockABI is 0 outside Linux.
func LandlockABI() int { return 0 }

// Probe reports that outside Linux commands run without a sandbox.
func Probe(mode string) Level {
	if mode == SandboxLandlock || mode == SandboxBwrap {
		return Level{Mode: mode, Err: errors.New("sandbox: " + mode + " needs Linux")}
	}
	return Level{Mode: SandboxOff, Detail: "off: no sandbox outside Linux; the process group is killed at the end of a call"}
}

func dieWithParent(*syscall.SysProcAttr) {}

// Started cannot tell outside Linux: nothing is refused.
func Started(pid int) string { return "" }

// sweep finds nothing outside Linux: the process group kill is all there is.
func sweep(id string, pgid int) int { return 0 }
