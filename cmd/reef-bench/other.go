//go:build !linux

package main

import (
	"fmt"
	"io"
)

// run needs Linux: reef-bench measures the gateway through /proc.
func run(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reef-bench: needs Linux (it reads /proc to measure the gateway)")
	return 1
}
