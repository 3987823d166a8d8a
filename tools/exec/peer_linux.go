package exec

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Started reports why the process pid must be treated as one that reef's exec tool (or any
// other child of this process) started, or "" when nothing says so. The control socket
// refuses such a peer (cmd/reef): a command the agent runs must not drive reef. It checks,
// each on its own enough:
//
//   - the process runs in another user namespace than this one: exec's sandbox puts every
//     command in a user namespace of its own, which no descendant can leave;
//   - this process is among its ancestors (/proc/<pid>/status PPid, up to init): the
//     supervisor is a child subreaper, so while it lives a command's daemons stay below it;
//   - its environment carries MarkerEnv, which exec sets for every command.
//
// A process that cannot be looked at (it ended, or /proc hides it) counts as started by reef.
func Started(pid int) string {
	self := os.Getpid()
	if pid == self {
		return ""
	}
	if pid <= 0 {
		return "it runs in another PID namespace"
	}
	if mine, err := os.Readlink("/proc/self/ns/user"); err == nil {
		if theirs, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/user"); err == nil && theirs != mine {
			return "it runs in another user namespace (as exec's sandbox does)"
		}
	}
	cur := pid
	for range 4096 {
		ppid, err := parentOf(cur)
		if err != nil {
			return fmt.Sprintf("its ancestry cannot be read: %v", err)
		}
		if ppid == self {
			return "it was started by reef (" + procName(pid) + ")"
		}
		if ppid <= 1 {
			break
		}
		cur = ppid
	}
	if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil &&
		(bytes.HasPrefix(env, []byte(MarkerEnv+"=")) || bytes.Contains(env, []byte("\x00"+MarkerEnv+"="))) {
		return "it descends from a command reef's exec tool ran"
	}
	return ""
}

// parentOf reads the PPid of pid from /proc/<pid>/status.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, fmt.Errorf("no PPid in /proc/%d/status", pid)
}

// procName is the command name of pid, for a log line.
func procName(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "pid " + strconv.Itoa(pid)
}
