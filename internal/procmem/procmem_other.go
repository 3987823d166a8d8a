//go:build !linux

package procmem

// ReleaseExecutable does nothing outside Linux.
func ReleaseExecutable() (Released, error) { return Released{}, nil }
