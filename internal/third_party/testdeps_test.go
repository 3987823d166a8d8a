package thirdparty

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestThirdPartyTestDepsAreRootRequirements: every module whose packages the modules under
// internal/third_party import (tests included) is required by reef's go.mod at the same
// version: `go mod download` at the root fetches what reef's go.mod lists, so the README's
// test command then runs offline. (A module only their tests use stays in reef's go.mod
// because testdeps.go imports it.)
func TestThirdPartyTestDepsAreRootRequirements(t *testing.T) {
	root := requirements(t, "../../go.mod")
	mods, _ := filepath.Glob("*/go.mod")
	if len(mods) == 0 {
		t.Fatal("no modules under internal/third_party")
	}
	for _, mod := range mods {
		dir := filepath.Dir(mod)
		own := requirements(t, mod)
		self := modulePath(t, mod)
		var files []string
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return err
		})
		for imp, file := range imports(t, files) {
			if !strings.Contains(strings.Split(imp, "/")[0], ".") || strings.HasPrefix(imp, self+"/") {
				continue // the standard library, or the module itself
			}
			path, version := provider(own, imp)
			if path == "" {
				t.Errorf("%s imports %s, which %s does not require", file, imp, mod)
				continue
			}
			if got := root[path]; got != version {
				t.Errorf("%s requires %s %s, reef's go.mod %q: make them equal", mod, path, version, got)
			}
		}
	}
}

// requirements reads the require lines of a go.mod: module path → version.
func requirements(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			block = true
		case len(f) == 1 && f[0] == ")":
			block = false
		case block && len(f) == 2:
			out[f[0]] = f[1]
		case len(f) == 3 && f[0] == "require":
			out[f[1]] = f[2]
		}
	}
	return out
}

func modulePath(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(p)
		}
	}
	t.Fatalf("%s: no module line", path)
	return ""
}

// imports returns the imported paths of files (path → a file importing it).
func imports(t *testing.T, files []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			out[p] = file
		}
	}
	return out
}

// provider returns the required module that provides package imp (the longest path prefix).
func provider(reqs map[string]string, imp string) (path, version string) {
	for p, v := range reqs {
		if (imp == p || strings.HasPrefix(imp, p+"/")) && len(p) > len(path) {
			path, version = p, v
		}
	}
	return path, version
}
