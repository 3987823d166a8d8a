package openclaw

import (
	"encoding/json"
	"strings"
)

// The top-level blocks reef maps key by key (tools, memory, session, messages, cron): every
// key the importer meets is mapped or reported with its reason, never dropped silently.

// sectionKeys say, for each such block, the keys that are mapped ("") and why the others
// are not; a key not listed is reported as having no reef equivalent.
var sectionKeys = map[string]map[string]string{
	"tools": {
		"allow": "", "deny": "", "web": "",
		"profile":      "reef has no tool profiles: agents[].tools.allow/deny choose an agent's tools",
		"exec":         "reef's exec has its own settings (tools.exec: sandbox, approvals, timeouts)",
		"elevated":     "reef has no elevated mode: exec outside the sandbox is tools.exec.sandbox: off",
		"byProvider":   "per-provider tool policies have no reef equivalent",
		"agentToAgent": "reef's agents talk through sessions_send, open to the owner",
		"media":        "reef's media settings are media.* (docs/media.md)",
		"links":        "link understanding has no reef equivalent: the agent uses web_fetch",
		"message":      "the message tool's settings have no reef equivalent",
		"sessions":     "session tool settings have no reef equivalent",
	},
	"tools.web": {"search": "", "fetch": ""},
	"tools.web.search": {
		"enabled": "", "provider": "", "apiKey": "",
		"maxResults":      "the agent asks for 1 to 10 results itself (web_search count)",
		"timeoutSeconds":  "reef's web_search waits 15 s",
		"cacheTtlMinutes": "reef does not cache searches",
	},
	"tools.web.fetch": {
		"enabled":         "",
		"maxChars":        "the agent asks for the length itself (web_fetch maxChars)",
		"timeoutSeconds":  "reef's web_fetch waits 30 s",
		"cacheTtlMinutes": "reef caches fetched pages for 15 minutes",
		"userAgent":       "reef sends its own User-Agent",
		"readability":     "reef extracts the main text of every page",
	},
	"memory": {
		"backend":   "reef indexes MEMORY.md and memory/ itself (memory.* in reef.yaml, docs/memory.md); the notes are copied",
		"citations": "memory_search results always name their file and lines in reef",
		"qmd":       "reef indexes the notes itself (memory.* in reef.yaml); QMD is not used",
	},
	"session": {
		"dmScope":       "",
		"reset":         "reef starts a new session on /new or /reset; there is no timed reset",
		"resetTriggers": "reef's reset commands are /new and /reset",
		"idleMinutes":   "reef keeps sessions until /new (session.idleMinutes only unloads an idle one from memory)",
		"store":         "reef keeps sessions in its own database",
		"mainKey":       "reef's main session is the owner's direct chat",
		"scope":         "reef's session keys follow session.dmScope",
		"identityLinks": "reef has no identity links: use session.dmScope main to share one session",
		"sendPolicy":    "reef has no send policy",
		"typingMode":    "reef shows typing while it works",
		"agentToAgent":  "reef's agents talk through sessions_send",
		"maintenance":   "reef prunes its own data",
	},
	"messages": {
		"queue":               "",
		"ackReaction":         "reef has no acknowledgement reaction",
		"ackReactionScope":    "reef has no acknowledgement reaction",
		"responsePrefix":      "reef adds no prefix to replies",
		"inbound":             "reef debounces through session.queue.debounceMs",
		"groupChat":           "reef answers in groups when mentioned or replied to",
		"tts":                 "reef has no text to speech",
		"removeAckAfterReply": "reef has no acknowledgement reaction",
	},
	"cron": {
		"store":             "",
		"enabled":           "reef runs cron jobs whenever the gateway runs",
		"maxConcurrentRuns": "reef runs cron jobs within llm.maxConcurrent",
		"webhook":           "webhook delivery of cron jobs has no reef equivalent",
		"webhookToken":      "webhook delivery of cron jobs has no reef equivalent",
		"sessionRetention":  "reef archives finished cron sessions by its own rules",
	},
}

// sectionReport reports the keys of the block at path that are not mapped.
func (m *mapper) sectionReport(path string, keys []string) {
	mapped := sectionKeys[path]
	for _, k := range keys {
		why, ok := mapped[k]
		switch {
		case !ok:
			m.skip(path+"."+k, "no reef equivalent")
		case why != "":
			m.skip(path+"."+k, "%s", why)
		}
	}
}

// settings maps and reports the tools, memory, session, messages and cron blocks.
func (m *mapper) settings() {
	sec := m.in.Config.sections
	for _, name := range []string{"tools", "memory", "session", "messages", "cron"} {
		if obj, ok := sec[name]; ok {
			m.sectionReport(name, sortedKeys(obj))
		}
	}
	var web map[string]map[string]any
	if raw, ok := sec["tools"]["web"]; ok {
		var obj map[string]map[string]any
		if json.Unmarshal(raw, &obj) == nil {
			web = obj
		}
		var keys map[string]any
		_ = json.Unmarshal(raw, &keys)
		m.sectionReport("tools.web", sortedKeys(keys))
	}
	for _, t := range []string{"search", "fetch"} {
		if obj, ok := web[t]; ok {
			m.sectionReport("tools.web."+t, sortedKeys(obj))
		}
	}
	m.globalTools()
	m.memory()
}

// globalTools applies the top-level tool policy to every agent: its deny and the web tools
// turned off (tools.web.fetch.enabled: false, tools.web.search.enabled: false) are denied to
// each; its allow becomes the allow of an agent without one. web_search's provider and key
// become tools.web.search.
func (m *mapper) globalTools() {
	t := m.in.Config.Tools
	globalDeny := m.keepTools("tools.deny: ", t.Deny)
	deny := append([]string(nil), globalDeny...)
	allow := m.keepTools("tools.allow: ", t.Allow)
	off := func(w webTool) bool { return w.Enabled != nil && !*w.Enabled }
	if off(t.Web.Fetch) {
		deny = append(deny, "web_fetch")
		m.imported("tools.web.fetch.enabled false: web_fetch denied to every agent")
	}
	if off(t.Web.Search) {
		deny = append(deny, "web_search")
		m.imported("tools.web.search.enabled false: web_search denied to every agent")
	} else if p := strings.ToLower(t.Web.Search.Provider); p != "" {
		switch p {
		case "brave", "tavily", "searxng":
			out := &outSearch{Provider: p}
			if p != "searxng" {
				out.APIKey = m.secret(t.Web.Search.APIKey, strings.ToUpper(p)+"_API_KEY", "tools.web.search.apiKey", true)
			}
			m.out.Tools = &outTools{Web: &outWeb{Search: out}}
			m.imported("tools.web.search: provider %s", p)
		default:
			m.skip("tools.web.search.provider "+p, "reef's web_search speaks brave, tavily and searxng")
		}
	}
	if len(deny) == 0 && len(allow) == 0 {
		return
	}
	for i := range m.out.Agents {
		a := &m.out.Agents[i]
		if a.Tools == nil {
			a.Tools = &outPolicy{}
		}
		a.Tools.Deny = dedupe(append(a.Tools.Deny, deny...))
		switch {
		case len(allow) == 0:
		case len(a.Tools.Allow) == 0:
			a.Tools.Allow = append([]string(nil), allow...)
		default:
			m.skip("tools.allow for agent "+a.ID, "the agent has its own tools.allow, kept as it is: review it against the global allow %s", strings.Join(allow, ", "))
		}
	}
	if len(globalDeny) > 0 {
		m.imported("tools.deny for every agent: %s", strings.Join(globalDeny, ", "))
	}
	if len(allow) > 0 {
		m.imported("tools.allow for the agents without their own: %s", strings.Join(allow, ", "))
	}
}

// memory maps agents.defaults.memorySearch to reef's memory block (the index of the notes).
func (m *mapper) memory() {
	ms := m.in.Config.Agents.Defaults.MemorySearch
	if ms == nil {
		return
	}
	out := &outMemory{Enabled: ms.Enabled, Model: ms.Model}
	switch p := strings.ToLower(ms.Provider); p {
	case "":
	case "openai", "gemini":
		out.Provider = p
	case "google":
		out.Provider = "gemini"
	case "local", "none":
		out.Provider = "none"
		m.skip("agents.defaults.memorySearch.provider "+p, "reef has no local embeddings: memory search runs by keyword (provider none)")
	default:
		m.skip("agents.defaults.memorySearch.provider "+p, "reef's embeddings come from openai or gemini; left to auto")
	}
	for _, s := range ms.Sources {
		switch s {
		case "memory", "sessions":
			out.Sources = append(out.Sources, s)
		default:
			m.skip("agents.defaults.memorySearch.sources "+s, "reef indexes memory and sessions")
		}
	}
	for _, k := range ms.keys {
		switch k {
		case "enabled", "provider", "model", "sources":
		default:
			m.skip("agents.defaults.memorySearch."+k, "no reef equivalent (memory.* in reef.yaml, docs/memory.md)")
		}
	}
	m.out.Memory = out
	m.imported("agents.defaults.memorySearch as memory%s", map[bool]string{true: " (enabled: false)", false: ""}[ms.Enabled != nil && !*ms.Enabled])
}
