package agent

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
)

//go:embed templates/*.md
var templates embed.FS

// Workspace file names reef knows about.
const (
	FileAgents    = "AGENTS.md"
	FileSoul      = "SOUL.md"
	FileTools     = "TOOLS.md"
	FileIdentity  = "IDENTITY.md"
	FileUser      = "USER.md"
	FileHeartbeat = "HEARTBEAT.md"
	FileBootstrap = "BOOTSTRAP.md"
	FileMemory    = "MEMORY.md"
	fileMemoryAlt = "memory.md"
	DirMemory     = "memory"
	DirSkills     = "skills"
)

// starterFiles are written by InitWorkspace, in this order. BOOTSTRAP.md is handled apart.
var starterFiles = []string{FileAgents, FileSoul, FileUser, FileIdentity, FileTools, FileHeartbeat}

// usedMarkers are the names whose presence shows a workspace has been used before.
var usedMarkers = append(slices.Clone(starterFiles), FileMemory, fileMemoryAlt, DirMemory, FileBootstrap)

// InitWorkspace creates the workspace dir (0700) and every starter file and folder that is
// missing. It never overwrites: a file that exists, even as a symlink or with other content, is
// left alone. BOOTSTRAP.md, the first-run ritual, is written only when the workspace is brand
// new: none of the starter files, MEMORY.md or memory/ existed before the call, so deleting it
// after the ritual is final.
//
// created lists what was made, workspace-relative; folders end in "/".
func InitWorkspace(dir string) (created []string, err error) {
	if dir == "" {
		return nil, errors.New("agent: init workspace: empty directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("agent: init workspace: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("agent: init workspace: %w", err)
	}
	defer root.Close()

	brandNew := true
	for _, name := range usedMarkers {
		if _, err := root.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
			brandNew = false
			break
		}
	}

	names := slices.Clone(starterFiles)
	if brandNew {
		names = append(names, FileBootstrap)
	}
	for _, name := range names {
		ok, err := createFile(root, name)
		if err != nil {
			return created, fmt.Errorf("agent: init workspace: %s: %w", name, err)
		}
		if ok {
			created = append(created, name)
		}
	}
	for _, d := range []string{DirMemory, DirSkills} {
		err := root.Mkdir(d, 0o700)
		switch {
		case err == nil:
			created = append(created, d+"/")
		case errors.Is(err, fs.ErrExist):
		default:
			return created, fmt.Errorf("agent: init workspace: %s: %w", d, err)
		}
	}
	return created, nil
}

// createFile writes the starter text for name unless a file by that name exists (O_EXCL, so a
// racing writer or a dangling symlink is never clobbered). It reports whether it wrote the file.
func createFile(root *os.Root, name string) (bool, error) {
	text, err := templates.ReadFile(path.Join("templates", name))
	if err != nil {
		return false, err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

// StarterText returns reef's starter text for a workspace file (AGENTS.md, SOUL.md...), for
// commands that show or restore the defaults. ok is false for a name reef has no starter for.
func StarterText(name string) (text string, ok bool) {
	b, err := templates.ReadFile(path.Join("templates", name))
	if err != nil {
		return "", false
	}
	return string(b), true
}
