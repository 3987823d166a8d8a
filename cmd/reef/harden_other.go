//go:build !linux

package main

// notDumpable has no equivalent here.
func notDumpable() error { return nil }
