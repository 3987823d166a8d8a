//go:build !linux

package main

import (
	"fmt"
	"io"
)

// runBench needs Linux: it measures the gateway through /proc.
func runBench(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reef bench: needs Linux (it reads /proc to measure the gateway)")
	return 1
}
