package configs

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/reefgw/reef/internal/netguard"
)

// ErrNoProvider means no LLM provider is configured at all; NoProviderHelp says what to set.
var ErrNoProvider = errors.New("no LLM provider configured")

// ErrUnsetVariable matches the problem of a ${VAR} reference whose variable is not set.
// Commands that only read (reef status, sessions, cron list...) need none of the secrets such
// variables usually hold, and go on without them.
var ErrUnsetVariable = errors.New("a variable the configuration references is not set")

// unsetError is an unset ${VAR}'s problem; it matches ErrUnsetVariable.
type unsetError string

func (e unsetError) Error() string        { return string(e) }
func (e unsetError) Is(target error) bool { return target == ErrUnsetVariable }

// NoProviderHelp is a short text telling a user how to configure a provider.
func NoProviderHelp() string {
	return `reef needs an LLM provider. Set one of these and run reef again:

  OpenAI     OPENAI_API_KEY=sk-...  REEF_MODEL=openai/gpt-4.1-mini
  Anthropic  ANTHROPIC_API_KEY=sk-ant-...
  Gemini     GEMINI_API_KEY=...
  Ollama     OPENAI_BASE_URL=http://127.0.0.1:11434/v1 REEF_MODEL=openai/llama3.1
  vLLM       OPENAI_BASE_URL=http://127.0.0.1:8000/v1 REEF_MODEL=openai/<model>

Or write $REEF_HOME/reef.yaml (default ~/.reef/reef.yaml): "reef init" writes a
commented example, the same as configs/reef.example.yaml.
`
}

var (
	idPattern     = regexp.MustCompile(`^[a-z0-9_-]+$`)
	providerTypes = []string{"openai", "anthropic", "gemini"}
	dmScopes      = []string{"main", "per-peer", "per-channel-peer", "per-account-channel-peer"}
	logLevels     = []string{"debug", "info", "warn", "error"}
	logFormats    = []string{"", "console", "json"}
	toolModes     = []string{"", "native", "prompt"}
	execSandboxes = []string{"auto", "off", "landlock", "bwrap"} // tools/exec.SandboxModes
	execApprovals = []string{"off", "owner", "always"}           // access.Approvals*
)

// Validate returns every problem in c, each naming its key path and how to fix it, joined
// with errors.Join. It expects ApplyDefaults to have run. errors.Is(err, ErrNoProvider)
// reports whether no provider is configured at all.
func (c *Config) Validate() error {
	var v validator
	v.unset = map[string]bool{}
	for _, u := range c.unset {
		v.unset[u.path] = true
		v.problems = append(v.problems, unsetError(fmt.Sprintf("%s: ${%s} is not set: set %s, or write ${%s:-} to allow an empty value",
			u.path, u.name, u.name, u.name)))
	}
	c.validateProviders(&v)
	c.validateAgents(&v)
	refs := make([]string, 0, len(c.Models))
	for ref := range c.Models {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		m, path := c.Models[ref], joinMapKey("models", ref)
		if _, _, err := SplitModel(ref); err != nil {
			v.addf("%s: %v", path, err)
		}
		v.nonNegative(path+".contextWindow", m.ContextWindow)
		v.nonNegative(path+".maxTokens", m.MaxTokens)
		v.oneOf(path+".toolMode", m.ToolMode, toolModes)
	}
	v.nonNegative("llm.maxConcurrent", c.LLM.MaxConcurrent)
	v.nonNegative("llm.maxRetries", c.LLM.MaxRetries)
	v.nonNegative("llm.idleTimeoutSeconds", c.LLM.IdleTimeoutSeconds)
	v.nonNegative("llm.maxRetryAfterSeconds", c.LLM.MaxRetryAfterSeconds)
	v.nonNegative("llm.maxAnswerChars", c.LLM.MaxAnswerChars)
	v.nonNegative("llm.streamTimeoutSeconds", c.LLM.StreamTimeoutSeconds)
	v.memory("memory", c.Memory)
	v.media(c.Media, c.Providers)
	v.nonNegative("llm.outageWaitMinutes", c.LLM.OutageWaitMinutes)
	v.nonNegative("session.idleMinutes", c.Session.IdleMinutes)
	if m := c.Session.RateLimit.Messages; m != nil && *m < 0 {
		v.addf("session.rateLimit.messages: %d is negative: use 0 to turn the limit off, or a positive number", *m)
	}
	v.nonNegative("session.rateLimit.perSeconds", c.Session.RateLimit.PerSeconds)
	v.nonNegative("session.dailyTokenBudget", c.Session.DailyTokenBudget)
	v.oneOf("session.dmScope", c.Session.DMScope, dmScopes)
	if c.Session.GuestModels != "" {
		v.oneOf("session.guestModels", c.Session.GuestModels, []string{"listed", "none"})
	}
	v.queue("session.queue", c.Session.Queue)
	for _, name := range slices.Sorted(maps.Keys(c.Session.QueueByChannel)) {
		path := joinMapKey("session.queueByChannel", name)
		if !slices.Contains(channelNames, name) {
			v.addf("%s: %q is not a channel: use %s", path, name, strings.Join(channelNames, ", "))
		}
		v.queue(path, c.Session.QueueByChannel[name])
	}
	for i, a := range c.Tools.Web.AllowPrivate {
		if err := netguard.CheckAllowEntry(a); err != nil {
			v.addf("tools.web.allowPrivate[%d]: %v", i, err)
		}
	}
	v.webSearch(c.Tools.Web.Search)
	e := c.Tools.Exec
	v.nonNegative("tools.exec.timeoutSeconds", e.TimeoutSeconds)
	v.nonNegative("tools.exec.maxTimeoutSeconds", e.MaxTimeoutSeconds)
	v.nonNegative("tools.exec.maxOutputBytes", e.MaxOutputBytes)
	v.oneOf("tools.exec.sandbox", e.Sandbox, execSandboxes)
	v.oneOf("tools.exec.approvals", e.Approvals, execApprovals)
	v.nonNegative("tools.exec.approvalTimeoutSeconds", e.ApprovalTimeoutSeconds)
	for _, l := range []struct {
		name string
		n    int
	}{{"processes", e.Limits.Processes}, {"fileSizeMB", e.Limits.FileSizeMB}, {"cpuSeconds", e.Limits.CPUSeconds}, {"memoryMB", e.Limits.MemoryMB}} {
		if l.n < -1 {
			v.addf("tools.exec.limits.%s: %d is not a limit: use a positive number, 0 for the default or -1 for none", l.name, l.n)
		}
	}
	for i, w := range e.Writable {
		if !filepath.IsAbs(w) {
			v.addf("tools.exec.writable[%d]: %q is not an absolute path", i, w)
		}
	}
	if e.MaxTimeoutSeconds > 0 && e.TimeoutSeconds > e.MaxTimeoutSeconds {
		v.addf("tools.exec.timeoutSeconds: %d is above tools.exec.maxTimeoutSeconds (%d): lower it or raise the maximum",
			e.TimeoutSeconds, e.MaxTimeoutSeconds)
	}
	c.validateExecBackground(&v)
	v.oneOf("log.level", c.Log.Level, logLevels)
	v.oneOf("log.format", c.Log.Format, logFormats)
	c.validateChannels(&v)
	c.validateBindings(&v)
	c.validateCron(&v)
	c.validateBackup(&v)
	c.validateStorage(&v)
	c.validateCluster(&v)
	c.validateGateway(&v)
	c.validateMCP(&v)
	return errors.Join(v.problems...)
}

func (c *Config) validateProviders(v *validator) {
	names := make([]string, 0, len(c.Providers))
	usable := false
	for name, p := range c.Providers {
		names = append(names, name)
		usable = usable || p.usable()
	}
	sort.Strings(names)
	if !usable {
		v.problems = append(v.problems, fmt.Errorf("providers: %w: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, or OPENAI_BASE_URL for a local server", ErrNoProvider))
	}
	for _, name := range names {
		p, path := c.Providers[name], joinMapKey("providers", name)
		if !idPattern.MatchString(name) {
			v.addf("%s: provider names use only a-z, 0-9, '_' and '-'", path)
		}
		if !slices.Contains(providerTypes, p.Type) {
			v.addf("%s.type: %q is not a provider type: use openai, anthropic or gemini (Ollama, vLLM, OpenRouter and most others speak openai)", path, p.Type)
		}
		if p.BaseURL != "" {
			u, err := url.Parse(p.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.addf("%s.baseUrl: %q is not an http(s) URL: write it like https://api.example.com/v1", path, p.BaseURL)
			}
		}
	}
}

func (c *Config) validateAgents(v *validator) {
	seen := map[string]int{}
	for i, a := range c.Agents {
		path := fmt.Sprintf("agents[%d]", i)
		switch {
		case a.ID == "":
			v.addf("%s.id: required for every agent but the first", path)
		case !idPattern.MatchString(a.ID):
			v.addf("%s.id: %q may use only a-z, 0-9, '_' and '-'", path, a.ID)
		}
		if j, dup := seen[a.ID]; dup && a.ID != "" {
			v.addf("%s.id: %q is already the id of agents[%d]: agent ids must be unique", path, a.ID, j)
		} else {
			seen[a.ID] = i
		}
		if a.Model == "" {
			if c.hasUsableProvider() {
				v.addf("%s.model: not set and no default applies: set REEF_MODEL=provider/model or %s.model", path, path)
			}
		} else {
			c.checkModelRef(v, path+".model", a.Model)
		}
		for j, f := range a.Fallbacks {
			c.checkModelRef(v, fmt.Sprintf("%s.fallbacks[%d]", path, j), f)
		}
		v.nonNegative(path+".limits.maxToolCalls", a.Limits.MaxToolCalls)
		v.nonNegative(path+".limits.turnTimeoutSeconds", a.Limits.TurnTimeoutSeconds)
		v.nonNegative(path+".limits.loopWarnAt", a.Limits.LoopWarnAt)
		v.nonNegative(path+".limits.loopStopAt", a.Limits.LoopStopAt)
		if w, s := a.Limits.LoopWarnAt, a.Limits.LoopStopAt; w > 0 && s > 0 && w >= s {
			v.addf("%s.limits.loopWarnAt: %d is not below loopStopAt (%d): the model would never be warned before the run stops", path, w, s)
		}
		v.nonNegative(path+".limits.dailyTokenBudget", a.Limits.DailyTokenBudget)
		v.nonNegative(path+".limits.maxReplyChunks", a.Limits.MaxReplyChunks)
		c.validateContext(v, path, a)
		validateSkillPolicy(v, path+".skills", a.Skills)
		v.memory(path+".memory", a.Memory)
		c.validateSubagents(v, path, a.Subagents)
	}
}

// validateSkillPolicy checks the skill names of an agent's allow and deny lists. Skills come
// and go with the workspace, so names are not checked against the skills found.
func validateSkillPolicy(v *validator, path string, p SkillPolicy) {
	allowed := map[string]bool{}
	for _, l := range []struct {
		list  string
		names []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		list := l.list
		for i, n := range l.names {
			switch {
			case strings.TrimSpace(n) == "":
				v.addf("%s.%s[%d]: empty: give a skill name (see reef skills list)", path, list, i)
			case strings.ContainsAny(n, "/\\ \t"):
				v.addf("%s.%s[%d]: %q is not a skill name: give the name from reef skills list, not a path", path, list, i, n)
			}
		}
	}
	for _, n := range p.Allow {
		allowed[n] = true
	}
	for i, n := range p.Deny {
		if allowed[n] {
			v.addf("%s.deny[%d]: %q is also in allow; deny wins, so remove it from one list", path, i, n)
		}
	}
}

// checkModelRef checks that ref is "provider/model" with a usable provider.
// When there is no provider at all, ErrNoProvider already says what to do.
func (c *Config) checkModelRef(v *validator, path, ref string) {
	prov, _, err := SplitModel(ref)
	if err != nil {
		v.addf("%s: %v", path, err)
		return
	}
	if !c.hasUsableProvider() {
		return
	}
	p, ok := c.Providers[prov]
	switch {
	case !ok && c.providerLike(prov) != "":
		_, model, _ := SplitModel(ref)
		like := c.providerLike(prov)
		v.addf("%s: %q names provider %q, which is not configured (did you mean %q? then write %q)", path, ref, prov, like, like+"/"+model)
	case !ok:
		v.addf("%s: %q needs provider %q: %s", path, ref, prov, providerHint(prov))
	case !p.usable():
		v.addf("%s: %q needs provider %q, which has neither apiKey nor baseUrl: %s", path, ref, prov, providerHint(prov))
	}
}

// providerLike returns the configured provider whose name is closest to a misspelt one
// ("opnai" → "openai"), or "".
func (c *Config) providerLike(name string) string {
	known := make([]string, 0, len(c.Providers))
	for k, p := range c.Providers {
		if p.usable() {
			known = append(known, k)
		}
	}
	sort.Strings(known)
	return suggest(name, known)
}

func providerHint(name string) string {
	for _, p := range envProviders {
		if p.name == name {
			return fmt.Sprintf("set %s (or %s for a compatible server), or add providers.%s to reef.yaml", p.keyVar, p.urlVar, name)
		}
	}
	return fmt.Sprintf("add providers.%s (with type and baseUrl) to reef.yaml", name)
}

func (c *Config) hasUsableProvider() bool {
	for _, p := range c.Providers {
		if p.usable() {
			return true
		}
	}
	return false
}

// validator collects problems.
type validator struct {
	problems []error
	unset    map[string]bool // key paths whose ${VAR} is not set: their problems match ErrUnsetVariable
}

// webSearch checks tools.web.search: a known provider with what it needs.
func (v *validator) webSearch(s WebSearchConfig) {
	const path = "tools.web.search"
	switch s.Provider {
	case "":
		if s.APIKey != "" || s.BaseURL != "" {
			v.addf("%s.provider: missing: name the provider the key or URL is for (brave, tavily or searxng)", path)
		}
		return
	case "brave", "tavily":
		if s.APIKey == "" {
			v.addf("%s.apiKey: %s needs an API key (or set %s)", path, s.Provider, map[string]string{"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY"}[s.Provider])
		}
	case "searxng":
		if s.BaseURL == "" {
			v.addf("%s.baseUrl: searxng needs your instance's URL, e.g. http://127.0.0.1:8888 (or set SEARXNG_URL)", path)
		}
	default:
		v.addf("%s.provider: %q is not valid: use one of brave, tavily, searxng", path, s.Provider)
		return
	}
	if s.BaseURL != "" {
		if u, err := url.Parse(s.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.addf("%s.baseUrl: %q is not an http(s) URL", path, s.BaseURL)
		}
	}
}

func (v *validator) addf(format string, args ...any) {
	err := fmt.Errorf(format, args...)
	if path, _, ok := strings.Cut(err.Error(), ":"); ok && v.unset[path] {
		err = unsetError(err.Error()) // a consequence of the unset variable
	}
	v.problems = append(v.problems, err)
}

func (v *validator) nonNegative(path string, n int) {
	if n < 0 {
		v.addf("%s: %d is negative: use 0 for the default or a positive number", path, n)
	}
}

func (v *validator) oneOf(path, val string, allowed []string) {
	if slices.Contains(allowed, val) {
		return
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	v.addf("%s: %q is not valid: use one of %s", path, val, strings.Join(shown, ", "))
}

var (
	queueModes   = []string{"", "steer", "followup", "collect", "interrupt"}
	dropPolicies = []string{"", "summarize", "old", "new"}
	channelNames = []string{"terminal", "telegram", "discord", "feishu", "webchat"}
)

func (v *validator) queue(path string, q QueueConfig) {
	v.oneOf(path+".mode", q.Mode, queueModes)
	v.oneOf(path+".drop", q.Drop, dropPolicies)
	v.nonNegative(path+".debounceMs", q.DebounceMs)
	v.nonNegative(path+".cap", q.Cap)
}

// Notes returns remarks about c that are not errors: keys that are still accepted but no
// longer do anything, OpenClaw-shaped keys read as reef's (aliases.go) and renamed keys read
// under their old names (renamed.go). reef logs them at start and `reef doctor` prints them.
func (c *Config) Notes() []string {
	notes := append(append([]string(nil), c.aliases...), c.renamed...)
	for i, a := range c.Agents {
		if a.Limits.MaxRepeatCalls != 0 {
			notes = append(notes, fmt.Sprintf("agents[%d].limits.maxRepeatCalls is no longer used and can be removed: "+
				"loop detection now counts calls with the same arguments and the same result (loopWarnAt, default 10; loopStopAt, default 20)", i))
		}
	}
	return notes
}
