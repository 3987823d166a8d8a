package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Check reads the Markdown files (slash paths relative to root) and returns one problem per
// relative link whose file does not exist under root, or whose #fragment names no heading of
// the Markdown file it points at. Links with a scheme (https:, mailto:) are not followed. A
// target starting with '/' is relative to root, as on GitHub; others to the linking file.
func Check(root string, files []string) ([]string, error) {
	var problems []string
	anchors := map[string]map[string]bool{} // slash path → its anchors, read once
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := anchors[p]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		anchors[p] = Anchors(string(b))
		return anchors[p], nil
	}
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(b)) {
			if l.External() {
				continue
			}
			where := fmt.Sprintf("%s:%d: link %q", file, l.Line, l.Target)
			target, err := url.PathUnescape(l.Path())
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", where, err))
				continue
			}
			switch {
			case target == "":
				target = file // "#anchor": this file
			case strings.HasPrefix(target, "/"):
				target = path.Clean(strings.TrimPrefix(target, "/"))
			default:
				target = path.Join(path.Dir(file), target)
			}
			if target == ".." || strings.HasPrefix(target, "../") {
				problems = append(problems, where+": points outside the repository")
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %s does not exist", where, target))
				continue
			}
			frag := l.Fragment()
			if frag == "" || !strings.HasSuffix(strings.ToLower(target), ".md") {
				continue
			}
			a, err := anchorsOf(target)
			if err != nil {
				return nil, err
			}
			if f, err := url.PathUnescape(frag); err != nil || !a[f] {
				problems = append(problems, fmt.Sprintf("%s: %s has no heading with anchor #%s", where, target, frag))
			}
		}
	}
	return problems, nil
}
