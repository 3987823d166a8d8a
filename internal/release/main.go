// Command release builds reef's release binaries: `go run ./internal/release [-o DIR]`.
//
// Each target (linux/amd64, linux/arm64, darwin/arm64) is a static binary (CGO_ENABLED=0)
// named reef-<os>-<arch>, with the version, the commit and the commit's date stamped into
// `reef version` (-ldflags -X), built with -trimpath and an empty build ID so the same commit
// gives the same bytes on any machine; SHA256SUMS lists their checksums (sha256sum -c reads it).
// The date is the commit's, not the build's, for the same reason.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// targets are the platforms a release has.
var targets = []string{"linux/amd64", "linux/arm64", "darwin/arm64"}

func main() {
	out := flag.String("o", "dist", "directory for the binaries and SHA256SUMS")
	version := flag.String("version", "", "the version to stamp (default: git describe --tags --always --dirty)")
	only := flag.String("targets", strings.Join(targets, ","), "comma-separated os/arch list")
	flag.Parse()
	if err := release(*out, *version, strings.Split(*only, ",")); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

func release(dir, version string, targets []string) error {
	var err error
	if version == "" {
		if version, err = git("describe", "--tags", "--always", "--dirty"); err != nil {
			return err
		}
	}
	commit, err := git("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	date, err := git("log", "-1", "--format=%cI", "HEAD")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ldflags := fmt.Sprintf("-s -w -buildid= -X main.version=%s -X main.commit=%s -X main.date=%s", version, commit, date)
	var sums strings.Builder
	for _, t := range targets {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok {
			return fmt.Errorf("target %q: want os/arch", t)
		}
		name := "reef-" + goos + "-" + goarch
		path := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", path, "./cmd/reef")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", t, err)
		}
		sum, err := sha256File(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		fmt.Printf("%s  %s\n", sum, path)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sums.String()), 0o644)
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
