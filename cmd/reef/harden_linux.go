package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// notDumpable clears PR_SET_DUMPABLE: /proc/<pid> becomes root's, and neither ptrace nor
// /proc/<pid>/{environ,mem,fd} is open to other processes of the same user. Root still reads them.
func notDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
