package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"
)

// Caps on the workspace files injected into the system prompt, in characters (runes).
const (
	MaxFileChars  = 20_000
	MaxTotalChars = 60_000
)

// minFileChars is the smallest budget worth injecting a file into; below it the file is skipped.
const minFileChars = 200

// File is one workspace file injected into the system prompt.
type File struct {
	Name      string // workspace-relative name, e.g. "AGENTS.md"
	Content   string // what the model sees: valid UTF-8, capped, with a notice when truncated
	Truncated bool
	Size      int // size of the file on disk, in bytes
}

// Workspace is what LoadWorkspace found in an agent's workspace.
type Workspace struct {
	Dir    string
	Files  []File  // in injection order
	Skills []Skill // sorted by name: the skills offered
	// SkillStatus lists every skill found and why it is not offered (LoadWorkspaceWith only).
	SkillStatus []SkillStatus
	Bootstrap   bool // BOOTSTRAP.md exists: the first-run ritual is not done yet
	Warnings    []string
}

// injectOrder lists the files injected into the prompt. The last entry holds alternatives.
var injectOrder = [][]string{
	{FileAgents}, {FileSoul}, {FileTools}, {FileIdentity}, {FileUser}, {FileHeartbeat},
	{FileBootstrap}, {FileMemory, fileMemoryAlt},
}

// LoadWorkspace reads the files to inject and the skills of the workspace at dir. Missing files
// are skipped; files that cannot be read (a symlink out of the workspace, a FIFO, no permission)
// are skipped with a warning. The only error is a workspace that cannot be opened at all.
func LoadWorkspace(dir string) (Workspace, error) {
	return loadWorkspace(dir, nil)
}

// LoadWorkspaceWith is LoadWorkspace with skills from every source of o, checked against its
// host and the agent's allow and deny lists (see LoadSkills).
func LoadWorkspaceWith(dir string, o SkillOptions) (Workspace, error) {
	return loadWorkspace(dir, &o)
}

func loadWorkspace(dir string, skills *SkillOptions) (Workspace, error) {
	ws := Workspace{Dir: dir}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ws, fmt.Errorf("agent: load workspace: %w", err)
	}
	defer root.Close()

	if _, err := root.Lstat(FileBootstrap); err == nil {
		ws.Bootstrap = true
	}
	budget := MaxTotalChars
	for _, alts := range injectOrder {
		for _, name := range alts {
			text, size, partial, err := readRegular(root, name, maxReadBytes)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				ws.Warnings = append(ws.Warnings, fmt.Sprintf("%s: not loaded: %v", name, err))
				break
			}
			if strings.TrimSpace(text) == "" {
				break
			}
			limit := min(MaxFileChars, budget)
			if limit < minFileChars {
				ws.Warnings = append(ws.Warnings, fmt.Sprintf("%s: not loaded: the %d-character budget for workspace files is used up", name, MaxTotalChars))
				break
			}
			f := capFile(name, text, size, limit, partial)
			if f.Truncated {
				ws.Warnings = append(ws.Warnings, fmt.Sprintf("%s: truncated to %d characters; shorten it", name, limit))
			}
			budget -= utf8.RuneCountInString(f.Content)
			ws.Files = append(ws.Files, f)
			break
		}
	}
	if skills == nil {
		ws.Skills, ws.Warnings = loadSkills(root, ws.Warnings)
		return ws, nil
	}
	statuses, warnings := LoadSkills(dir, *skills)
	ws.Skills, ws.SkillStatus, ws.Warnings = Available(statuses), statuses, append(ws.Warnings, warnings...)
	return ws, nil
}

// maxReadBytes bounds how much of a workspace file is read whole. Beyond it only the head and
// the tail are read: with at most 20,000 characters kept, the middle would be cut anyway.
const (
	maxReadBytes = 1 << 20
	headBytes    = 4 * MaxFileChars
	tailBytes    = 2 * MaxFileChars
)

// readRegular reads name from root if it is a regular file (after following symlinks that stay
// inside the root). Files over max bytes are read as head + "\n" + tail and partial is true. The
// text is made valid UTF-8; size is the size on disk.
func readRegular(root *os.Root, name string, max int64) (text string, size int, partial bool, err error) {
	fi, err := root.Stat(name)
	if err != nil {
		return "", 0, false, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := root.Open(name)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return "", 0, false, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	size64 := fi.Size()
	var b []byte
	if size64 <= max {
		b, err = io.ReadAll(io.LimitReader(f, max))
	} else {
		partial = true
		b = make([]byte, headBytes+1+tailBytes)
		if _, err = f.ReadAt(b[:headBytes], 0); err == nil {
			b[headBytes] = '\n'
			_, err = f.ReadAt(b[headBytes+1:], size64-tailBytes)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return "", 0, false, err
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, int(size64), partial, nil
}

// capFile caps text at limit runes, keeping about 70% head and 20% tail around a notice. A
// partial text (the middle of a huge file was never read) always gets the notice.
func capFile(name, text string, size, limit int, partial bool) File {
	f := File{Name: name, Content: text, Size: size}
	n := utf8.RuneCountInString(text)
	if n <= limit && !partial {
		return f
	}
	notice := fmt.Sprintf("\n\n[… %s is truncated here: it is too long to include whole (%d bytes). Use the read tool on %s to see all of it.]\n\n", name, size, name)
	avail := limit - utf8.RuneCountInString(notice)
	if avail <= 0 {
		notice, avail = "\n[…]\n", limit-5
	}
	head := min(limit*7/10, avail*7/9)
	tail := min(limit*2/10, avail-head)
	if head+tail > n { // only for a partial text shorter than the cap
		head = n * 7 / 9
		tail = n - head
	}
	f.Content = runePrefix(text, head) + notice + runeSuffix(text, n, tail)
	f.Truncated = true
	return f
}

// runePrefix returns the first n runes of s.
func runePrefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// runeSuffix returns the last n runes of s, which has total runes.
func runeSuffix(s string, total, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= total {
		return s
	}
	skip := total - n
	i := 0
	for pos := range s {
		if i == skip {
			return s[pos:]
		}
		i++
	}
	return ""
}
