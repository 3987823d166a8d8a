// Command reefup is the README's way to run reef on a fresh machine: `go run ./cmd/reefup
// ARGS...` says at once that it is building (the first build compiles every dependency and
// takes minutes), installs the `reef` command (`go install ./cmd/reef`), tells where it went
// and whether that directory is on PATH, then runs `reef ARGS...` in its place. It uses the
// standard library only, so that `go run` compiles it in seconds.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	fmt.Fprintln(os.Stderr, "reefup: building reef (go install ./cmd/reef): the first build compiles every dependency, "+
		"minutes on a small machine; later runs start in seconds")
	bin, err := install()
	if err != nil {
		fmt.Fprintf(os.Stderr, "reefup: %v\n", err)
		os.Exit(1)
	}
	if hint := pathHint(bin, os.Getenv("PATH")); hint != "" {
		fmt.Fprintln(os.Stderr, hint)
	}
	args := append([]string{"reef"}, os.Args[1:]...)
	if err := syscall.Exec(bin, args, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "reefup: run %s: %v\n", bin, err)
		os.Exit(1)
	}
}

// install runs `go install ./cmd/reef` in the module's root and returns the installed binary.
func install() (string, error) {
	root, err := goEnv("GOMOD")
	if err != nil || root == "" || root == os.DevNull {
		return "", fmt.Errorf("run me from inside reef's repository (go env GOMOD: %q, %v)", root, err)
	}
	cmd := exec.Command("go", "install", "./cmd/reef")
	cmd.Dir, cmd.Stdout, cmd.Stderr = filepath.Dir(root), os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install ./cmd/reef: %w", err)
	}
	dir, err := goEnv("GOBIN")
	if err != nil {
		return "", err
	}
	if dir == "" {
		gopath, err := goEnv("GOPATH")
		if err != nil {
			return "", err
		}
		dir = filepath.Join(filepath.SplitList(gopath)[0], "bin")
	}
	return filepath.Join(dir, "reef"), nil
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// pathHint says how to type `reef` from now on, when bin's directory is not on path ("" when
// it is).
func pathHint(bin, path string) string {
	dir := filepath.Dir(bin)
	for _, p := range filepath.SplitList(path) {
		if filepath.Clean(p) == dir {
			return ""
		}
	}
	return fmt.Sprintf("reefup: installed %s; %s is not on your PATH, so to type `reef …` as the docs do, run:\n"+
		"  export PATH=\"$PATH:%s\"   # and add it to your shell's profile", bin, dir, dir)
}
