package openclaw

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reefgw/reef/schedule"
)

// personaFiles are the workspace files reef reads, as OpenClaw does (docs/workspace.md).
var personaFiles = []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md",
	"MEMORY.md", "memory.md", "HEARTBEAT.md", "BOOTSTRAP.md"}

// workspaceDirs are the workspace directories copied whole.
var workspaceDirs = []string{"memory", "skills"}

// maxCopyBytes skips files larger than this (a note says so).
const maxCopyBytes = 32 << 20

// files plans the copies: each agent's persona files, memory/ and skills/ into its reef
// workspace, and the shared skills (~/.openclaw/skills) into $REEF_HOME/skills.
func (m *mapper) files() []Copy {
	var copies []Copy
	for i, a := range m.out.Agents {
		src := m.workDir[a.ID]
		dst := filepath.Join(m.opts.ReefHome, "workspace")
		if i > 0 {
			dst = filepath.Join(m.opts.ReefHome, "workspace-"+a.ID)
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			m.skip("agents "+a.ID+": workspace "+src, "not readable (%v): the agent starts with reef's starter files", errText(err))
			continue
		}
		n := len(copies)
		var other []string
		for _, e := range entries {
			name := e.Name()
			switch {
			case contains(personaFiles, name) && e.Type().IsRegular():
				copies = m.addFile(copies, filepath.Join(src, name), filepath.Join(dst, name))
			case contains(workspaceDirs, name) && e.IsDir():
				copies = m.addTree(copies, filepath.Join(src, name), filepath.Join(dst, name))
			case strings.HasPrefix(name, "."):
			default:
				other = append(other, name)
			}
		}
		m.imported("workspace of %s: %d file(s) from %s to %s", a.ID, len(copies)-n, src, dst)
		if len(other) > 0 {
			m.skip(fmt.Sprintf("workspace of %s: %s", a.ID, strings.Join(other, ", ")),
				"only the persona files, memory/ and skills/ are copied: copy other files to %s yourself if the agent needs them", dst)
		}
	}
	shared := filepath.Join(m.in.Dir, "skills")
	if st, err := os.Stat(shared); err == nil && st.IsDir() {
		n := len(copies)
		copies = m.addTree(copies, shared, filepath.Join(m.opts.ReefHome, "skills"))
		m.imported("shared skills: %d file(s) from %s", len(copies)-n, shared)
	}
	if st, err := os.Stat(filepath.Join(m.in.Dir, "agents")); err == nil && st.IsDir() {
		m.skip("agents/<id>/sessions", "conversations are not imported: reef starts them afresh (the workspace notes and MEMORY.md carry over)")
	}
	return copies
}

// errText is an error without the path the message already names.
func errText(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

func (m *mapper) addFile(copies []Copy, from, to string) []Copy {
	st, err := os.Lstat(from)
	switch {
	case err != nil:
		m.skip(from, "not readable: %v", errText(err))
	case !st.Mode().IsRegular():
		m.skip(from, "not a regular file (a symlink or device): not copied")
	case st.Size() > maxCopyBytes:
		m.skip(from, "larger than %d MB: not copied", maxCopyBytes>>20)
	default:
		copies = append(copies, Copy{From: from, To: to})
	}
	return copies
}

// addTree plans the copy of every regular file below from; symlinks are not followed.
func (m *mapper) addTree(copies []Copy, from, to string) []Copy {
	_ = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			m.skip(p, "not readable: %v", errText(err))
			return nil
		}
		rel, _ := filepath.Rel(from, p)
		switch {
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir():
		default:
			copies = m.addFile(copies, p, filepath.Join(to, rel))
		}
		return nil
	})
	return copies
}

// jobs maps cron/jobs.json to reef's cron tool input; reef validates each when adding it.
func (m *mapper) jobs() []Job {
	var out []Job
	for _, j := range m.in.Jobs {
		name := orDefault(j.Name, orDefault(j.ID, j.JobID))
		what := "cron job " + name
		in := schedule.JobInput{Name: name, SessionTarget: j.SessionTarget, WakeMode: j.WakeMode,
			Enabled: j.Enabled, DeleteAfterRun: j.DeleteAfterRun}
		spec, err := jobSchedule(j.Schedule)
		if err != nil {
			m.skip(what, "%v", err)
			continue
		}
		in.Schedule = spec
		var p struct {
			Kind    string `json:"kind"`
			Text    string `json:"text"`
			Message string `json:"message"`
			Model   string `json:"model"`
		}
		if err := json.Unmarshal(j.Payload, &p); err != nil || (p.Text == "" && p.Message == "") {
			m.skip(what, "no payload text")
			continue
		}
		if p.Model != "" {
			m.skip(what+": payload.model", "reef runs cron jobs on the agent's model")
		}
		in.Payload = &schedule.Payload{Kind: p.Kind, Text: p.Text, Message: p.Message}
		if in.Payload.Kind == "" {
			in.Payload.Kind = "systemEvent"
			if p.Message != "" {
				in.Payload.Kind = "agentTurn"
			}
		}
		if d := j.Delivery; d != nil {
			switch {
			case d.Mode == "webhook":
				m.skip(what, "webhook delivery has no reef equivalent")
				continue
			case d.Mode == "none":
				in.Delivery = &schedule.Delivery{Mode: "none"}
			case d.Channel != "" && d.Channel != "last" && d.To != "":
				in.Delivery = &schedule.Delivery{Mode: "channel", Channel: d.Channel, To: strings.TrimPrefix(strings.TrimPrefix(d.To, "channel:"), "user:")}
			default:
				in.Delivery = &schedule.Delivery{Mode: "announce"}
			}
		}
		agent := m.out.Agents[0].ID
		if j.AgentID != "" {
			if id, ok := m.ids[j.AgentID]; ok {
				agent = id
			} else {
				m.skip(what+": agentId "+j.AgentID, "no such agent: the job runs on %s", agent)
			}
		}
		if _, err := schedule.NewJob(in, "check", agent, "", m.opts.Now); err != nil {
			m.skip(what, "%v", err)
			continue
		}
		out = append(out, Job{AgentID: agent, Input: in})
		m.imported("cron job %q for %s", name, agent)
	}
	return out
}

// jobSchedule reads a job's schedule, including older forms (atMs, a bare cron string).
func jobSchedule(raw json.RawMessage) (*schedule.Spec, error) {
	var s struct {
		Kind     string `json:"kind"`
		Expr     string `json:"expr"`
		Cron     string `json:"cron"`
		TZ       string `json:"tz"`
		Timezone string `json:"timezone"`
		EveryMs  int64  `json:"everyMs"`
		At       string `json:"at"`
		AtMs     int64  `json:"atMs"`
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return &schedule.Spec{Kind: "cron", Expr: str}, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("schedule not readable: %v", err)
	}
	spec := &schedule.Spec{Kind: s.Kind, Expr: orDefault(s.Expr, s.Cron), TZ: orDefault(s.TZ, s.Timezone), EveryMs: s.EveryMs, At: s.At}
	if s.AtMs > 0 && spec.At == "" {
		spec.At = time.UnixMilli(s.AtMs).UTC().Format(time.RFC3339)
	}
	if spec.Kind == "" {
		switch {
		case spec.Expr != "":
			spec.Kind = "cron"
		case spec.EveryMs > 0:
			spec.Kind = "every"
		case spec.At != "":
			spec.Kind = "at"
		}
	}
	return spec, nil
}
