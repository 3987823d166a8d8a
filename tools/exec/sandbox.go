package exec

import (
	"os"
	"slices"
	"strconv"
)

// Sandbox levels for Config.Sandbox.
const (
	SandboxAuto     = "auto"     // Landlock when the kernel has it, else rlimits only
	SandboxOff      = "off"      // no limits and no confinement; descendants still die with the call
	SandboxLandlock = "landlock" // rlimits, no_new_privs and Landlock; refuses to run without Landlock
	SandboxBwrap    = "bwrap"    // rlimits and bubblewrap namespaces; refuses to run without bwrap
)

// SandboxModes are the accepted values of Config.Sandbox.
var SandboxModes = []string{SandboxAuto, SandboxOff, SandboxLandlock, SandboxBwrap}

// Limits are the resource limits (rlimits) set on every command. A zero field takes its
// default; a negative one means no limit.
type Limits struct {
	Processes  int   // processes the command may add to those its user already has, default 256
	FileSize   int64 // bytes of the largest file a command may write, default 1 GiB
	CPUSeconds int   // CPU seconds per process, default 600
	Memory     int64 // bytes of address space per process, default 4 GiB
}

// Default limits.
const (
	DefaultProcesses  = 256
	DefaultFileSize   = 1 << 30
	DefaultCPUSeconds = 600
	DefaultMemory     = 4 << 30
)

func (l Limits) withDefaults() Limits {
	def := func(v, d int64) int64 {
		switch {
		case v == 0:
			return d
		case v < 0:
			return -1
		}
		return v
	}
	return Limits{
		Processes:  int(def(int64(l.Processes), DefaultProcesses)),
		FileSize:   def(l.FileSize, DefaultFileSize),
		CPUSeconds: int(def(int64(l.CPUSeconds), DefaultCPUSeconds)),
		Memory:     def(l.Memory, DefaultMemory),
	}
}

// Level is the sandbox in effect for a configured mode on this machine.
type Level struct {
	Mode   string // off, rlimits, landlock or bwrap: what commands actually get
	Detail string // a line for `reef doctor`
	Err    error  // the configured mode cannot run here; exec refuses commands
}

// defaultTempDirs are writable under Landlock and bwrap besides the workspace.
func defaultTempDirs() []string {
	dirs := []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"}
	out := dirs[:0]
	for _, d := range dirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// helperArgs are the arguments after Config.Helper: the options of `reef exec-sandbox`, then
// "--" and the command line to run.
func helperArgs(level string, l Limits, writable, hide []string, argv ...string) []string {
	a := []string{"-level", level,
		"-nproc", strconv.Itoa(l.Processes),
		"-fsize", strconv.FormatInt(l.FileSize, 10),
		"-cpu", strconv.Itoa(l.CPUSeconds),
		"-as", strconv.FormatInt(l.Memory, 10)}
	for _, w := range writable {
		a = append(a, "-write", w)
	}
	for _, h := range hide {
		a = append(a, "-hide", h)
	}
	return append(append(a, "--"), argv...)
}
