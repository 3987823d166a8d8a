package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/redact"
)

// The Config page's editor (web.ConfigEditor): reef.yaml as written, checked with the same
// loader and checks the gateway uses, written atomically with a backup, applied as a reload.

var _ web.ConfigEditor = (*webBackend)(nil)

// redactedMark is what a secret value written literally in reef.yaml shows as.
const redactedMark = "[redacted]"

func (b *webBackend) editor() (*reloader, error) {
	if b.rt.reload == nil {
		return nil, errors.New("this reef does not reload its configuration")
	}
	return b.rt.reload, nil
}

func (b *webBackend) ConfigSource(context.Context) (web.ConfigEdit, error) {
	l, err := b.editor()
	if err != nil {
		return web.ConfigEdit{}, err
	}
	data, err := os.ReadFile(l.file())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return web.ConfigEdit{}, err
	}
	cfg := l.current()
	return web.ConfigEdit{Path: l.file(), YAML: redact.New(cfg.Secrets()...).String(string(data)), Form: settingsForm(cfg, data)}, nil
}

func (b *webBackend) EditConfig(_ context.Context, text string, save bool) (web.ConfigEdit, error) {
	l, err := b.editor()
	if err != nil {
		return web.ConfigEdit{}, err
	}
	out, err := editConfig(l, text, save)
	cfg := l.current()
	out.YAML = redact.New(cfg.Secrets()...).String(out.YAML) // a key written in the file is never shown
	out.Form = settingsForm(cfg, []byte(text))
	return out, err
}

// editConfig checks text as the new reef.yaml and, with save, writes and applies it.
func editConfig(l *reloader, text string, save bool) (web.ConfigEdit, error) {
	out := web.ConfigEdit{Path: l.file(), YAML: text, Checked: true}
	if strings.Contains(text, redactedMark) {
		out.Problems = []string{"a value is " + redactedMark + ": put the secret in the environment and write a ${NAME} reference " +
			"(for example apiKey: ${OPENAI_API_KEY}); the page never shows or writes a secret value"}
		return out, nil
	}
	changes, _, err := l.check([]byte(text))
	if err != nil {
		out.Problems = strings.Split(strings.TrimSpace(err.Error()), "\n")
		return out, nil
	}
	for _, c := range changes {
		out.Changes = append(out.Changes, c.String())
	}
	if !save {
		return out, nil
	}
	if err := writeConfigFile(l.file(), []byte(text)); err != nil {
		return out, err
	}
	st := l.reload("web UI")
	if st.Refused != "" { // it passed the check: the reload itself failed (a channel, an MCP server)
		out.Problems = strings.Split(st.Refused, "\n")
		return out, nil
	}
	out.Saved, out.Applied, out.Restart = true, st.Applied, st.Restart
	return out, nil
}

// writeConfigFile replaces path with data atomically (a temporary file beside it, synced,
// renamed over it), keeping the old file as path.bak. The mode of the old file is kept
// (0600 for a new one: reef.yaml may hold secrets).
func writeConfigFile(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path+".bak", old, mode); err != nil {
			return fmt.Errorf("backup of %s: %w", path, err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".reef.yaml-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// reloadOutcome is the Overview's view of the last reload.
func reloadOutcome(rt *running) *web.ReloadOutcome {
	st := reloadStatusOf(rt)
	if st == nil {
		return nil
	}
	return &web.ReloadOutcome{At: st.At, Source: st.Source, Refused: st.Refused, Applied: st.Applied, Restart: st.Restart}
}
