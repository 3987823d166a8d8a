package exec

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sweep kills what a call left running, without relying on its supervisor (which the command
// may have killed, with the sandbox off or without Landlock's signal scope): every process in
// the process group pgid (the supervisor's, which the shell shares) and every process whose
// environment carries MarkerEnv=id, including those that left the group and the session
// (setsid). It repeats until a scan finds none, and returns how many it killed. A process
// that both left the group and dropped the marker from its environment (env -i) is not found.
func sweep(id string, pgid int) int {
	self := os.Getpid()
	marker := []byte(MarkerEnv + "=" + id + "\x00")
	killed := map[int]bool{}
	for range 100 {
		found := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || pid <= 1 {
				continue
			}
			if !inCall(pid, pgid, marker) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
				found++
			}
		}
		if found == 0 {
			break
		}
	}
	return len(killed)
}

// inCall reports whether pid, a live process (zombies are skipped), belongs to the call.
func inCall(pid, pgid int, marker []byte) bool {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(s[i+1:]) // state, ppid, pgrp, ...
	if len(f) < 3 || f[0] == "Z" || f[0] == "X" || dying(dir) {
		return false
	}
	if g, _ := strconv.Atoi(f[2]); pgid > 0 && g == pgid {
		return true
	}
	env, err := os.ReadFile(dir + "/environ")
	return err == nil && (bytes.HasPrefix(env, marker) || bytes.Contains(env, append([]byte{0}, marker...)))
}

// dying reports a process with a SIGKILL pending (the process group kill got there first).
func dying(dir string) bool {
	b, err := os.ReadFile(dir + "/status")
	if err != nil {
		return true // gone
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "ShdPnd" && k != "SigPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
			return true
		}
	}
	return false
}
