package openclaw

import (
	"fmt"
	"slices"
	"strings"
)

// builtinProvider is how reef reaches a provider OpenClaw knows by name.
type builtinProvider struct {
	typ, baseURL, env string
}

var builtinProviders = map[string]builtinProvider{
	"openai":     {"openai", "", "OPENAI_API_KEY"},
	"anthropic":  {"anthropic", "", "ANTHROPIC_API_KEY"},
	"google":     {"gemini", "", "GEMINI_API_KEY"},
	"gemini":     {"gemini", "", "GEMINI_API_KEY"},
	"openrouter": {"openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
	"groq":       {"openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"},
	"mistral":    {"openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"},
	"xai":        {"openai", "https://api.x.ai/v1", "XAI_API_KEY"},
	"deepseek":   {"openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"},
	"moonshot":   {"openai", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"},
	"ollama":     {"openai", "http://127.0.0.1:11434/v1", ""},
}

// apiTypes maps models.providers.*.api to reef's provider types.
var apiTypes = map[string]string{
	"openai-completions":   "openai",
	"openai-responses":     "openai",
	"anthropic-messages":   "anthropic",
	"google-generative-ai": "gemini",
}

// providers defines a reef provider for every provider the agents' models name, and drops
// the models whose provider reef cannot reach.
func (m *mapper) providers() {
	custom := m.in.Config.Models.Providers
	m.out.Providers = map[string]outProvider{}
	ok := map[string]bool{}
	define := func(name string) bool {
		if done, seen := ok[name]; seen {
			return done
		}
		p, good := m.provider(name, custom)
		ok[name] = good
		if good {
			m.out.Providers[name] = p
		}
		return good
	}
	usable := func(ref, where string) bool {
		name, _, _ := strings.Cut(ref, "/")
		if define(name) {
			return true
		}
		m.skip(where+" "+ref, "its provider %q cannot be reached from reef (see above)", name)
		return false
	}
	for i := range m.out.Agents {
		a := &m.out.Agents[i]
		if a.Model != "" && !usable(a.Model, "agents "+a.ID+": model") {
			a.Model = ""
		}
		a.Fallbacks = slices.DeleteFunc(a.Fallbacks, func(f string) bool { return !usable(f, "agents "+a.ID+": fallback") })
		if a.Model == "" && len(a.Fallbacks) > 0 {
			a.Model, a.Fallbacks = a.Fallbacks[0], a.Fallbacks[1:]
		}
	}
	for _, name := range sortedKeys(custom) {
		for _, md := range custom[name].Models {
			ref := name + "/" + md.ID
			if !ok[name] || md.ID == "" || (md.ContextWindow == 0 && md.MaxTokens == 0) {
				continue
			}
			if m.out.Models == nil {
				m.out.Models = map[string]outModel{}
			}
			m.out.Models[ref] = outModel{ContextWindow: md.ContextWindow, MaxTokens: md.MaxTokens}
		}
	}
	for _, name := range sortedKeys(custom) {
		if _, seen := ok[name]; !seen {
			m.skip("models.providers."+name, "no agent's model uses it: add it to providers in reef.yaml when you need it")
		}
	}
	for _, name := range sortedKeys(m.out.Providers) {
		p := m.out.Providers[name]
		m.imported("provider %s: %s%s", name, p.Type, at(p.BaseURL))
	}
}

func at(url string) string {
	if url == "" {
		return ""
	}
	return " at " + url
}

// provider maps one provider name.
func (m *mapper) provider(name string, custom map[string]ProviderEntry) (outProvider, bool) {
	envVar := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name)) + "_API_KEY"
	if c, ok := custom[name]; ok {
		typ, known := apiTypes[c.API]
		if c.API == "" {
			typ, known = builtinProviders[name].typ, builtinProviders[name].typ != ""
			if !known {
				typ, known = "openai", true
			}
		}
		if !known {
			m.skip("models.providers."+name, "api %q: reef speaks openai-completions, anthropic-messages and google-generative-ai", c.API)
			return outProvider{}, false
		}
		if c.API == "openai-responses" {
			m.skip("models.providers."+name+".api openai-responses", "reef speaks Chat Completions: the endpoint must also serve /chat/completions")
		}
		p := outProvider{Type: typ, BaseURL: c.BaseURL}
		if b, ok := builtinProviders[name]; ok && b.env != "" {
			envVar = b.env
		}
		p.APIKey = m.apiKey(c, envVar, "models.providers."+name+".apiKey")
		if p.BaseURL == "" {
			p.BaseURL = builtinProviders[name].baseURL
		}
		return p, true
	}
	b, ok := builtinProviders[name]
	if !ok {
		why := "not a provider reef knows, and models.providers has no entry for it"
		if strings.HasSuffix(name, "-codex") || strings.Contains(name, "oauth") || name == "github-copilot" {
			why = "it signs in by OAuth subscription; reef needs an API key"
		}
		m.skip("provider "+name, "%s", why)
		return outProvider{}, false
	}
	p := outProvider{Type: b.typ, BaseURL: b.baseURL}
	if b.env != "" {
		p.APIKey = "${" + b.env + "}"
		m.needEnv(b.env, fmt.Sprintf("the %s API key (OpenClaw read it from the environment or its auth profiles; not copied)", name))
	}
	return p, true
}

// apiKey maps a custom provider's apiKey. OpenClaw also accepts the bare name of an
// environment variable there.
func (m *mapper) apiKey(c ProviderEntry, envVar, where string) string {
	var s string
	if len(c.APIKey) > 2 && c.APIKey[0] == '"' {
		s = strings.Trim(string(c.APIKey), `"`)
	}
	if envName.MatchString(s) && strings.Contains(s, "_") {
		m.needEnv(s, where+" (OpenClaw read the variable of that name)")
		return "${" + s + "}"
	}
	if len(c.APIKey) == 0 && c.BaseURL != "" && (strings.Contains(c.BaseURL, "127.0.0.1") || strings.Contains(c.BaseURL, "localhost")) {
		return "" // a local server
	}
	return m.secret(c.APIKey, envVar, where, true)
}

// session maps session.dmScope and messages.queue.
func (m *mapper) session() {
	s := &outSession{}
	switch d := m.in.Config.Session.DMScope; d {
	case "":
	case "main", "per-peer", "per-channel-peer", "per-account-channel-peer":
		s.DMScope = d
		m.imported("session.dmScope %s", d)
	default:
		m.skip("session.dmScope "+d, "reef knows main, per-peer, per-channel-peer and per-account-channel-peer")
	}
	q := m.in.Config.Messages.Queue
	mode := q.Mode
	switch mode {
	case "", "steer", "followup", "collect", "interrupt":
	case "steer-backlog", "steer+backlog":
		mode = "steer"
		m.skip("messages.queue.mode "+q.Mode, "imported as steer: reef has no backlog variant")
	case "queue":
		mode = "followup"
		m.skip("messages.queue.mode queue", "imported as followup (each message its own run, in order)")
	default:
		mode = ""
		m.skip("messages.queue.mode "+q.Mode, "reef knows steer, followup, collect and interrupt")
	}
	drop := q.Drop
	if drop != "" && drop != "summarize" && drop != "old" && drop != "new" {
		m.skip("messages.queue.drop "+drop, "reef knows summarize, old and new")
		drop = ""
	}
	if mode != "" || q.DebounceMs > 0 || q.Cap > 0 || drop != "" {
		s.Queue = &outQueue{Mode: mode, DebounceMs: q.DebounceMs, Cap: q.Cap, Drop: drop}
		m.imported("messages.queue as session.queue (mode %s)", orDefault(mode, "steer"))
	}
	if *s != (outSession{}) {
		m.out.Session = s
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
