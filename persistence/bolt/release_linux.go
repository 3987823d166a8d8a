package bolt

import (
	"fmt"
	"os"
	"syscall"

	"go.etcd.io/bbolt"
)

// ReleaseMapped drops the database pages this process has mapped from its resident memory.
// bbolt reads through a shared, read-only mapping of the whole file and writes through the
// file itself, so the pages stay in the kernel's page cache: reading one again costs a minor
// page fault, not a disk read. Every transaction touches pages of the mapping, so without
// this the RSS of a long-running gateway grows with its database, transcripts it will not
// read again included.
func (s *Store) ReleaseMapped() error {
	pageSize := uintptr(os.Getpagesize())
	return s.db.View(func(tx *bbolt.Tx) error {
		// A read transaction holds bbolt's mmap lock: the mapping cannot move or be unmapped
		// (that would let the advice land on whatever is mapped there next) until it ends.
		start := s.db.Info().Data
		size := uintptr(tx.Size()) &^ (pageSize - 1) // the file in use; the mapping is at least as long
		if size == 0 {
			return nil
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, size, syscall.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("bolt: release mapped pages: %w", errno)
		}
		return nil
	})
}
