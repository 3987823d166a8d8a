//go:build unix

package bolt

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/reefgw/reef/persistence"
)

// lockFile takes the lock bbolt takes (flock: exclusive for a writer, shared for a reader),
// waiting up to timeout (0: not at all), and fails with persistence.ErrLocked when another
// process holds it. Closing f releases it; bbolt, handed f, takes the same lock again at once.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return persistence.ErrLocked
		}
		time.Sleep(10 * time.Millisecond) // bbolt polls the same way (flockRetryTimeout)
	}
}
