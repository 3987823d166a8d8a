//go:build !linux

package bolt

// ReleaseMapped does nothing outside Linux.
func (s *Store) ReleaseMapped() error { return nil }
