//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// reefModule is the package reef-bench builds when no reef binary is given or found.
const reefModule = "github.com/reefgw/reef/cmd/reef"

// reefFlag adds -reef to flags.
func reefFlag(flags *flag.FlagSet) *string {
	return flags.String("reef", "", "the reef binary to measure (default: reef next to reef-bench, else one built from ./cmd/reef)")
}

// resolveReef is findReef with a temporary directory for the build; cleanup removes it.
func resolveReef(path string, stderr io.Writer) (exe string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "reef-bench-build-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	if exe, err = findReef(path, dir, stderr); err != nil {
		cleanup()
		return "", nil, err
	}
	return exe, cleanup, nil
}

// findReef returns the reef binary to run: path when set; else a reef next to this
// executable; else one built with `go build` into dir, said on stderr.
func findReef(path, dir string, stderr io.Writer) (string, error) {
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
			return "", fmt.Errorf("-reef %s: not a file", path)
		}
		return abs, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "reef")
		if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
			return beside, nil
		}
	}
	out := filepath.Join(dir, "reef")
	fmt.Fprintf(stderr, "reef-bench: no -reef and no reef next to reef-bench: building %s with go build into %s\n", reefModule, dir)
	cmd := exec.Command("go", "build", "-o", out, reefModule)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s (run reef-bench inside reef's module, or give -reef PATH): %w", reefModule, err)
	}
	return out, nil
}

// parseFlags parses args; -h or --help prints usage and the flags on stdout. done reports
// that the command ends here with code (0 after help, 2 after a bad flag, which the flag
// package explained on stderr).
func parseFlags(flags *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	flags.SetOutput(stderr)
	flags.Usage = func() {} // printed below, on stdout for -h
	err := flags.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(flags, usage, stdout)
		return 0, true
	case err != nil:
		printUsage(flags, usage, stderr)
		return 2, true
	}
	return 0, false
}

// printUsage prints usage and the flags of flags on w.
func printUsage(flags *flag.FlagSet, usage string, w io.Writer) {
	out := flags.Output()
	defer flags.SetOutput(out)
	flags.SetOutput(w)
	fmt.Fprint(w, usage)
	flags.PrintDefaults()
}
