package agent

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
)

// SkillRequires is what a skill needs to be offered, from its front matter (OpenClaw's format):
//
//	metadata: {"openclaw": {"requires": {"bins": [...], "anyBins": [...], "env": [...],
//	           "config": [...], "tools": [...]}, "os": [...], "always": true}}
//
// The same keys are read directly under metadata too. tools is reef's: tools the agent must be
// offered in the conversation (web_fetch, exec).
type SkillRequires struct {
	Bins    []string `json:"bins,omitempty"`    // every one on PATH
	AnyBins []string `json:"anyBins,omitempty"` // at least one on PATH
	Env     []string `json:"env,omitempty"`     // environment variables that must be set and not empty
	Config  []string `json:"config,omitempty"`  // reef config keys that must be set (dotted, e.g. "tools.exec.sandbox")
	Tools   []string `json:"tools,omitempty"`   // tools the conversation must offer
	OS      []string `json:"os,omitempty"`      // linux, darwin, windows; empty means any
	Always  bool     `json:"always,omitempty"`  // offered whatever else it requires
}

// metadataKeys are the blocks of metadata a skill's requirements may sit in, by precedence.
var metadataKeys = []string{"openclaw", "clawdbot", "reef"}

// parseRequires reads the requirements from a skill's metadata. Strings are accepted where
// lists are expected.
func parseRequires(md map[string]any) SkillRequires {
	block := md
	for _, k := range metadataKeys {
		if m, ok := md[k].(map[string]any); ok {
			block = m
			break
		}
	}
	var r SkillRequires
	req, _ := block["requires"].(map[string]any)
	r.Bins, r.AnyBins = stringList(req["bins"]), stringList(req["anyBins"])
	r.Env, r.Config, r.Tools = stringList(req["env"]), stringList(req["config"]), stringList(req["tools"])
	r.OS = stringList(block["os"])
	r.Always, _ = block["always"].(bool)
	return r
}

func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		if s := strings.TrimSpace(v); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	}
	return nil
}

// SkillHost is the machine and configuration skills are checked against. Zero fields mean the
// real machine: exec.LookPath, os.LookupEnv and runtime.GOOS; a nil Config has no key set.
type SkillHost struct {
	LookPath func(file string) (string, error)
	LookEnv  func(key string) (string, bool)
	GOOS     string
	Config   func(key string) bool // whether a reef config key is set (non-zero, not false)
}

// Unmet says why a skill cannot run on this host; nil means it can. Tools are not checked
// here: they depend on the conversation (see UnmetTools).
func (h SkillHost) Unmet(r SkillRequires) []string {
	if r.Always {
		return nil
	}
	look := h.LookPath
	if look == nil {
		look = exec.LookPath
	}
	env := h.LookEnv
	if env == nil {
		env = os.LookupEnv
	}
	goos := cmpOr(h.GOOS, runtime.GOOS)
	var why []string
	if len(r.OS) > 0 && !slices.Contains(r.OS, goos) {
		why = append(why, fmt.Sprintf("runs on %s, not %s", strings.Join(r.OS, ", "), goos))
	}
	var missing []string
	for _, b := range r.Bins {
		if _, err := look(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		why = append(why, "missing binar"+plural(len(missing), "y", "ies")+" on PATH: "+strings.Join(missing, ", "))
	}
	if len(r.AnyBins) > 0 && !slices.ContainsFunc(r.AnyBins, func(b string) bool { _, err := look(b); return err == nil }) {
		why = append(why, "needs one of these on PATH: "+strings.Join(r.AnyBins, ", "))
	}
	missing = nil
	for _, e := range r.Env {
		if v, ok := env(e); !ok || v == "" {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		why = append(why, "environment variable"+plural(len(missing), "", "s")+" not set: "+strings.Join(missing, ", "))
	}
	missing = nil
	for _, k := range r.Config {
		if h.Config == nil || !h.Config(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		why = append(why, "reef config not set: "+strings.Join(missing, ", "))
	}
	return why
}

// UnmetTools says which tools a skill needs that are not among offered; nil when none.
func UnmetTools(r SkillRequires, offered func(name string) bool) []string {
	if r.Always {
		return nil
	}
	var missing []string
	for _, t := range r.Tools {
		if !offered(t) {
			missing = append(missing, t)
		}
	}
	return missing
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
