package openclaw

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reefgw/reef/tools"
)

// agentList returns the agents in file order with the default agent first (reef's default
// agent is agents[0]); none configured is one agent "main" on the defaults.
func (m *mapper) agentList() []Agent {
	a := m.in.Config.Agents
	list := append([]Agent(nil), a.List...)
	if len(list) == 0 {
		for _, id := range a.order {
			e := a.Entries[id]
			if e.ID == "" {
				e.ID = id
			}
			list = append(list, e)
		}
	}
	if len(list) == 0 {
		return []Agent{{ID: "main"}}
	}
	for i, ag := range list {
		if ag.Default && i > 0 {
			list = append([]Agent{ag}, append(list[:i:i], list[i+1:]...)...)
			break
		}
	}
	return list
}

// agentKeys are the per-agent keys the importer maps; the rest are reported.
var agentKeys = map[string]string{
	"id": "", "default": "", "name": "", "identity": "", "workspace": "", "model": "", "systemPrompt": "",
	"skills": "", "tools": "", "heartbeat": "", "subagents": "", "timeoutSeconds": "", "agentDir": "",
	"sandbox":         "reef confines exec with its own sandbox (tools.exec.sandbox)",
	"groupChat":       "mention patterns: reef answers in groups when mentioned or replied to",
	"thinkingDefault": "reef has no thinking level setting",
	"params":          "per-model request parameters have no reef equivalent",
	"runtime":         "ACP runtimes have no reef equivalent",
	"compaction":      "reef compacts by its own rules (agents[].compaction)",
	"contextPruning":  "reef truncates tool results by its own rules",
	"models":          "the model catalog: reef's agents[].models lists models for /model; aliases are not imported",
	"memorySearch":    "per-agent memory settings are not imported: set agents[].memory in reef.yaml (agents.defaults.memorySearch is imported as memory)",
}

func (m *mapper) agents() {
	def := m.in.Config.Agents.Defaults
	list := m.agentList()
	anyHeartbeat := false
	for _, a := range list {
		anyHeartbeat = anyHeartbeat || a.Heartbeat != nil
	}
	for i, a := range list {
		id := reefAgentID(a.ID)
		if id != a.ID {
			m.skip("agents "+a.ID, "renamed to %q: reef agent ids use a-z, 0-9, '_' and '-'", id)
		}
		m.ids[a.ID] = id
		out := outAgent{ID: id, Name: a.Name, SystemPrompt: strings.TrimSpace(a.SystemPrompt)}
		if out.SystemPrompt == "" {
			out.SystemPrompt = strings.TrimSpace(def.SystemPrompt) // agents.defaults.systemPrompt
		}
		if out.Name == "" {
			out.Name = a.Identity.Name
		}
		model := a.Model
		if len(model) == 0 {
			model = def.Model
		}
		out.Model, out.Fallbacks = modelRefs(model)
		if a.Skills == nil && def.Skills != nil {
			a.Skills = def.Skills
		}
		out.Skills = m.skills(id, a.Skills)
		if len(a.Tools.Allow) == 0 && len(a.Tools.Deny) == 0 && a.Tools.Profile == "" {
			a.Tools = def.Tools // agents.defaults.tools
		}
		out.Tools = m.tools(id, a.Tools.Allow, a.Tools.Deny, a.Tools.Profile)
		if t := a.TimeoutSeconds; t > 0 {
			out.Limits = &outLimits{TurnTimeoutSeconds: t}
		} else if t := def.TimeoutSeconds; t > 0 {
			out.Limits = &outLimits{TurnTimeoutSeconds: t}
		}
		out.Heartbeat = m.heartbeat(id, a, def, anyHeartbeat)
		out.Subagents = m.subagents(a, def)
		m.out.Agents = append(m.out.Agents, out)
		m.workDir[id] = m.workspaceOf(a, i == 0)
		m.imported("agent %s%s: model %s", id, named(out.Name), orNone(out.Model))
		for _, k := range a.keys {
			if why := agentKeys[k]; why != "" {
				m.skip(fmt.Sprintf("agents %s: %s", a.ID, k), "%s", why)
			} else if _, ok := agentKeys[k]; !ok {
				m.skip(fmt.Sprintf("agents %s: %s", a.ID, k), "not a setting reef has")
			}
		}
	}
	for _, k := range m.in.Config.Agents.Defaults.keys {
		why, known := agentKeys[k]
		switch {
		case k == "memorySearch": // imported as memory (settings.go)
		case !known:
			m.skip("agents.defaults."+k, "not a setting reef has")
		case why != "":
			m.skip("agents.defaults."+k, "%s", why)
		}
	}
	// sub-agent allowlists name OpenClaw ids: use the reef ones.
	for i := range m.out.Agents {
		if s := m.out.Agents[i].Subagents; s != nil {
			for j, id := range s.AllowAgents {
				if r, ok := m.ids[id]; ok {
					s.AllowAgents[j] = r
				}
			}
		}
	}
}

func named(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

func orNone(s string) string {
	if s == "" {
		return "not set (reef's default: REEF_MODEL or the first provider with a key)"
	}
	return s
}

// workspaceOf is where OpenClaw kept the agent's files.
func (m *mapper) workspaceOf(a Agent, first bool) string {
	switch {
	case a.Workspace != "":
		return m.stateDir(a.Workspace)
	case first && m.in.Config.Agents.Defaults.Workspace != "":
		return m.stateDir(m.in.Config.Agents.Defaults.Workspace)
	case first:
		return m.stateDir("~/.openclaw/workspace")
	}
	return m.stateDir("~/.openclaw/workspace-" + a.ID)
}

// modelRefs reads a model: "provider/model" or {primary, fallbacks}. A bare model name is
// an Anthropic model to OpenClaw.
func modelRefs(raw json.RawMessage) (string, []string) {
	var s string
	var obj struct {
		Primary   string   `json:"primary"`
		Fallbacks []string `json:"fallbacks"`
	}
	switch {
	case len(raw) == 0:
		return "", nil
	case json.Unmarshal(raw, &s) == nil:
	case json.Unmarshal(raw, &obj) == nil:
		s = obj.Primary
	}
	fix := func(ref string) string {
		ref = strings.TrimSpace(ref)
		if ref != "" && !strings.Contains(ref, "/") {
			return "anthropic/" + ref
		}
		return ref
	}
	var fb []string
	for _, f := range obj.Fallbacks {
		fb = append(fb, fix(f))
	}
	return fix(s), dedupe(fb)
}

// skills reads an agent's skills: OpenClaw's list is an allowlist; [] means none.
func (m *mapper) skills(id string, raw json.RawMessage) *outPolicy {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []string
	var pol outPolicy
	switch {
	case json.Unmarshal(raw, &list) == nil && len(list) == 0:
		m.skip("agents "+id+": skills []", "reef has no \"no skills\" setting: list the skills to deny under agents[].skills.deny")
		return nil
	case json.Unmarshal(raw, &list) == nil:
		return &outPolicy{Allow: dedupe(list)}
	case json.Unmarshal(raw, &pol) == nil:
		return &pol
	}
	m.skip("agents "+id+": skills", "not a list of skill names")
	return nil
}

// toolAliases are OpenClaw tool names reef spells differently.
var toolAliases = map[string]string{"bash": "exec"}

// tools maps an agent's tool policy, leaving out names reef does not have.
func (m *mapper) tools(id string, allow, deny []string, profile string) *outPolicy {
	if profile != "" && profile != "full" {
		m.skip("agents "+id+": tools.profile "+profile, "reef has no tool profiles: the agent gets every tool its tools.allow/deny leave it")
	}
	keep := func(list []string) []string { return m.keepTools("agents "+id+": ", list) }
	p := &outPolicy{Allow: keep(allow), Deny: keep(deny)}
	if len(allow) > 0 && len(p.Allow) == 0 {
		m.skip("agents "+id+": tools.allow", "none of its tools exist in reef: the agent gets every tool instead; review agents[].tools")
	}
	if len(p.Allow) == 0 && len(p.Deny) == 0 {
		return nil
	}
	return p
}

// keepTools returns the names of list reef has (OpenClaw's bash is exec), reporting the
// others under where.
func (m *mapper) keepTools(where string, list []string) []string {
	var out []string
	for _, n := range list {
		n = strings.ToLower(strings.TrimSpace(n))
		if a, ok := toolAliases[n]; ok {
			n = a
		}
		_, group := tools.Groups[n]
		if group || m.known[n] || n == tools.All {
			out = append(out, n)
			continue
		}
		m.skip(where+"tool "+n, "reef has no such tool or group; left out")
	}
	return dedupe(out)
}

// heartbeat maps an agent's heartbeat. In OpenClaw, once any agent defines one, only those
// agents run heartbeats; reef runs them for every agent unless told "off".
func (m *mapper) heartbeat(id string, a, def Agent, anyHeartbeat bool) *outHeartbeat {
	hb := a.Heartbeat
	if hb == nil && !anyHeartbeat {
		hb = def.Heartbeat
	}
	if hb == nil {
		if anyHeartbeat {
			return &outHeartbeat{Every: "off"}
		}
		return nil
	}
	out := &outHeartbeat{Every: strings.TrimSpace(hb.Every)}
	switch out.Every {
	case "0", "0m", "0s", "0h":
		out.Every = "off"
	}
	switch hb.Target {
	case "", "last":
		out.Target = "last"
	case "none":
		out.Target = "none"
	default:
		out.Target = "last"
		m.skip("agents "+id+": heartbeat.target "+hb.Target, "reef sends heartbeat replies to the last chat used (target: last)")
	}
	if ah := hb.ActiveHours; ah != nil {
		tz := ah.TZ
		if tz == "" {
			tz = ah.Timezone
		}
		out.ActiveHours = &outActiveHours{Start: ah.Start, End: ah.End, TZ: tz}
	}
	return out
}

func (m *mapper) subagents(a, def Agent) *outSubagents {
	s := a.Subagents
	d := def.Subagents
	pick := func(v, dv int) int {
		if v != 0 {
			return v
		}
		return dv
	}
	out := &outSubagents{
		AllowAgents:         dedupe(s.AllowAgents),
		MaxSpawnDepth:       pick(s.MaxSpawnDepth, d.MaxSpawnDepth),
		MaxChildren:         pick(s.MaxChildrenPerAgent, d.MaxChildrenPerAgent),
		MaxConcurrent:       pick(s.MaxConcurrent, d.MaxConcurrent),
		RunTimeoutSeconds:   pick(s.RunTimeoutSeconds, d.RunTimeoutSeconds),
		ArchiveAfterMinutes: pick(s.ArchiveAfterMinutes, d.ArchiveAfterMinutes),
	}
	if len(out.AllowAgents) == 0 && len(d.AllowAgents) > 0 {
		out.AllowAgents = dedupe(d.AllowAgents)
	}
	if len(out.AllowAgents) == 0 && out.MaxSpawnDepth == 0 && out.MaxChildren == 0 && out.MaxConcurrent == 0 &&
		out.RunTimeoutSeconds == 0 && out.ArchiveAfterMinutes == 0 {
		return nil
	}
	return out
}
