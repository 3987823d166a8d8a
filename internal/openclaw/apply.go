package openclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// bindings maps route bindings of the channels reef has.
func (m *mapper) bindings() {
	for i, b := range m.in.Config.Bindings {
		what := fmt.Sprintf("bindings[%d]", i)
		ch := b.Match.Channel
		agent, ok := m.ids[b.AgentID]
		switch {
		case b.Type != "" && b.Type != "route":
			m.skip(what, "type %s has no reef equivalent", b.Type)
			continue
		case ch != "telegram" && ch != "discord" && ch != "feishu":
			m.skip(what, "channel %q: reef has no such channel", ch)
			continue
		case !ok:
			m.skip(what, "agent %q is not configured", b.AgentID)
			continue
		case b.Match.GuildID != "" || b.Match.TeamID != "":
			m.skip(what, "guild and team matches have no reef equivalent: bind the channels by peer id")
			continue
		}
		out := outBinding{AgentID: agent, Match: outMatch{Channel: ch, AccountID: b.Match.AccountID}}
		if out.Match.AccountID == "*" {
			out.Match.AccountID = ""
		}
		if p := b.Match.Peer; p != nil {
			var id string
			if json.Unmarshal(p.ID, &id) != nil {
				id = strings.TrimSpace(string(p.ID))
			}
			kind := p.Kind
			if kind == "dm" {
				kind = "direct"
			}
			out.Match.Peer = &outPeer{Kind: kind, ID: id}
		}
		m.out.Bindings = append(m.out.Bindings, out)
		m.imported("binding: %s → %s", ch, agent)
	}
}

// Conflicts lists the files the plan would write that exist already with other content:
// configPath and the copies' targets.
func (p *Plan) Conflicts(configPath string) []string {
	var out []string
	if differs(configPath, p.YAML) {
		out = append(out, configPath)
	}
	for _, c := range p.Copies {
		if data, err := os.ReadFile(c.From); err == nil && differs(c.To, data) {
			out = append(out, c.To)
		}
	}
	return out
}

// differs reports whether path exists with content other than data.
func differs(path string, data []byte) bool {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return err != nil || !bytes.Equal(old, data)
}

// Write writes the config to configPath and copies the files. Existing files with other
// content are replaced only with overwrite; otherwise nothing is written.
func (p *Plan) Write(configPath string, overwrite bool) error {
	if c := p.Conflicts(configPath); len(c) > 0 && !overwrite {
		return fmt.Errorf("openclaw: %d file(s) exist already with other content (first: %s): nothing written; "+
			"move them away or run again with --force to replace them", len(c), c[0])
	}
	if err := writeFile(configPath, bytes.NewReader(p.YAML), 0o600); err != nil {
		return err
	}
	for _, c := range p.Copies {
		if err := copyFile(c.From, c.To); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	f, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("openclaw: %w", err)
	}
	defer f.Close()
	return writeFile(to, f, 0o644)
}

// writeFile writes through a temporary file renamed into place.
func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("openclaw: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".import-*")
	if err != nil {
		return fmt.Errorf("openclaw: %w", err)
	}
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("openclaw: write %s: %w", path, err)
	}
	return nil
}
