package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLogDurationsCarryUnits: a duration in a log line reads "retryIn=966ms", not a bare
// number (zerolog's Dur writes milliseconds without a unit). The one exception is
// "startup", which reef-bench parses as milliseconds.
func TestLogDurationsCarryUnits(t *testing.T) {
	dur := regexp.MustCompile(`\.Dur\("(\w+)"`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "third_party" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range dur.FindAllStringSubmatch(string(b), -1) {
			if m[1] != "startup" {
				t.Errorf("%s: log field %q is a bare number of milliseconds: log it as a string with its unit (d.Round(time.Millisecond).String())", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
