//go:build !unix

package bolt

import (
	"os"
	"time"
)

// lockFile does nothing where flock is missing; bbolt locks the file its own way.
func lockFile(*os.File, bool, time.Duration) error { return nil }
