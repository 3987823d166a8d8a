package depcheck

import (
	"bufio"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// File is one parsed Go file.
type File struct {
	Name    string   // slash path relative to the module root, e.g. providers/openai/client.go
	Dir     string   // its package directory relative to the module root, "" at the root
	Test    bool     // a _test.go file
	Imports []string // import paths
}

// Violation is one import that breaks a rule.
type Violation struct {
	File   string // slash path relative to the module root
	Import string
	Rule   string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: imports %s (%s)", v.File, v.Import, v.Rule)
}

// Check parses the imports of every Go file of the module rooted at root and returns the
// imports that break a rule, sorted by file. Files that cannot be parsed are an error.
func Check(root string) ([]Violation, error) {
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	files, err := parseModule(root)
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, f := range files {
		out = append(out, checkFile(module, f)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// CheckBinaries lists, for each rule of binaryRules whose command exists under root, the
// dependencies of the command that break it (`go list -deps`, once per GOOS of the rule).
// File is the command's directory, Rule names the GOOS.
func CheckBinaries(root string) ([]Violation, error) {
	var out []Violation
	for _, r := range binaryRules {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(r.cmd))); err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, goos := range r.goos {
			deps, err := listDeps(root, r.cmd, goos)
			if err != nil {
				return nil, err
			}
			for _, dep := range deps {
				if r.bad(dep) && !seen[dep] {
					seen[dep] = true
					out = append(out, Violation{File: r.cmd, Import: dep, Rule: r.name + ", GOOS=" + goos})
				}
			}
		}
	}
	return out, nil
}

// listDeps returns the import paths of the packages the command in dir links for goos.
func listDeps(root, dir, goos string) ([]string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+dir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("depcheck: go list -deps ./%s (GOOS=%s): %v\n%s", dir, goos, err, stderr.String())
	}
	return strings.Fields(string(out)), nil
}

// checkFile applies the rules to one file; each import is reported once, under the first
// rule it breaks.
func checkFile(module string, f File) []Violation {
	var out []Violation
	for _, imp := range f.Imports {
		rel, inModule := relImport(module, imp)
		if inModule && rel == f.Dir {
			continue // an external test package importing its own package
		}
		i := importRef{path: imp, rel: rel, inModule: inModule}
		for _, r := range rules {
			if r.from(f) && r.bad(f, i) {
				out = append(out, Violation{File: f.Name, Import: imp, Rule: r.name})
				break
			}
		}
	}
	return out
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	fh, err := os.Open(gomod)
	if err != nil {
		return "", fmt.Errorf("depcheck: %w", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			if p, err := strconv.Unquote(strings.TrimSpace(rest)); err == nil {
				return p, nil
			}
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("depcheck: no module line in %s", gomod)
}

// parseModule parses the imports of every Go file under root, skipping what the go tool
// skips (vendor, testdata, directories starting with "." or "_") and nested modules.
func parseModule(root string) ([]File, error) {
	var files []File
	var errs []error
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		af, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f := File{Name: rel, Dir: path.Dir(rel), Test: strings.HasSuffix(rel, "_test.go")}
		if f.Dir == "." {
			f.Dir = ""
		}
		for _, s := range af.Imports {
			if ip, err := strconv.Unquote(s.Path.Value); err == nil {
				f.Imports = append(f.Imports, ip)
			}
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("depcheck: %w", errors.Join(errs...))
	}
	return files, nil
}

// relImport returns imp relative to the module ("providers/openai") and whether it is in it.
func relImport(module, imp string) (string, bool) {
	if imp == module {
		return "", true
	}
	if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
		return rest, true
	}
	return "", false
}
