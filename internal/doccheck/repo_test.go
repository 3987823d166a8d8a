package doccheck

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/internal/testutil"
)

// TestRepositoryLinks checks every relative link of the repository's Markdown files.
func TestRepositoryLinks(t *testing.T) {
	root := testutil.ModuleRoot(t)
	files := markdownFiles(t, root)
	for _, want := range []string{"README.md", "docs/architecture.md"} {
		if !slices.Contains(files, want) {
			t.Fatalf("%s is not among the Markdown files found: %v", want, files)
		}
	}
	problems, err := Check(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestReadme keeps the README a page people finish: short, linking every docs/ page, and
// showing the test command CI runs word for word.
func TestReadme(t *testing.T) {
	root := testutil.ModuleRoot(t)
	readme := read(t, filepath.Join(root, "README.md"))
	if n := strings.Count(readme, "\n"); n >= 150 {
		t.Errorf("README.md has %d lines; keep it under 150 and move detail to docs/", n)
	}
	linked := map[string]bool{}
	for _, l := range Links(readme) {
		linked[filepath.ToSlash(filepath.Clean(l.Path()))] = true
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if rel := "docs/" + filepath.Base(p); !linked[rel] {
			t.Errorf("README.md does not link %s", rel)
		}
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Skipf("no .ci/run: %v", err)
	}
	var command string
	for _, line := range strings.Split(string(ci), "\n") {
		if strings.HasPrefix(line, "go vet ") {
			command = line
		}
	}
	if command == "" {
		t.Fatal(".ci/run has no line starting with \"go vet \"")
	}
	if !strings.Contains(readme, "\n"+command+"\n") {
		t.Errorf("README.md does not show .ci/run's test command on a line of its own:\n%s", command)
	}
}

// markdownFiles returns the tracked Markdown files (slash paths relative to root) outside
// internal/third_party, whose READMEs are upstream's. Without git it walks the tree.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	cmd := exec.Command("git", "ls-files", "-z", "--", "*.md")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
	} else {
		t.Logf("git ls-files: %v; walking the tree instead", err)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".md") {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files = slices.DeleteFunc(files, func(f string) bool {
		return strings.HasPrefix(f, "internal/third_party/")
	})
	slices.Sort(files)
	return files
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
