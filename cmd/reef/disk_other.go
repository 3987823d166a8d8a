//go:build !linux

package main

// statDisk is not implemented outside Linux: doctor says nothing about the disk there.
func statDisk(string) (diskSpace, bool) { return diskSpace{}, false }
