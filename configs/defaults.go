package configs

import (
	"os"
	"path/filepath"
	"strings"
)

// Defaults applied by ApplyDefaults.
const (
	DefaultMaxToolCalls         = 50
	DefaultTurnTimeoutSeconds   = 600
	DefaultLoopWarnAt           = 10
	DefaultLoopStopAt           = 20
	DefaultRateLimitMessages    = 20
	DefaultRateLimitPerSeconds  = 60
	DefaultMaxRetries           = 3
	DefaultIdleTimeoutSeconds   = 90
	DefaultMaxRetryAfterSeconds = 30
	DefaultMaxAnswerChars       = 100000
	DefaultStreamTimeoutSeconds = 600
	DefaultOutageWaitMinutes    = 60
	DefaultMaxReplyChunks       = 20
	DefaultIdleMinutes          = 10
	DefaultDMScope              = "per-channel-peer"
	DefaultExecTimeoutSeconds   = 120
	DefaultExecMaxTimeout       = 1800
	DefaultExecMaxOutputBytes   = 65536
	DefaultExecSandbox          = "auto"
	DefaultExecApprovals        = "owner"
	DefaultApprovalTimeout      = 600
	DefaultExecProcesses        = 256
	DefaultExecFileSizeMB       = 1024
	DefaultExecCPUSeconds       = 600
	DefaultExecMemoryMB         = 4096
	// exec's background processes (tools.exec.background)
	DefaultExecBackgroundRunning  = 4
	DefaultExecBackgroundTotal    = 32
	DefaultExecBackgroundKept     = 16
	DefaultExecBackgroundKeepMins = 60
	DefaultExecBackgroundOutput   = 1 << 20
	DefaultLogLevel               = "info"
	DefaultContextWindow          = 128000
	DefaultToolMode               = "native"
)

// envProvider is a provider that can be configured from the environment alone.
type envProvider struct {
	name, keyVar, urlVar, model string
}

// envProviders in order of preference for the default model.
var envProviders = []envProvider{
	{"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-4.1-mini"},
	{"anthropic", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "claude-sonnet-4-5"},
	{"gemini", "GEMINI_API_KEY", "GEMINI_BASE_URL", "gemini-2.5-flash"},
}

// ApplyDefaults fills every unset field of c, reading env (os.Getenv when nil) for
// REEF_HOME, REEF_MODEL and the provider variables (OPENAI_API_KEY, OPENAI_BASE_URL,
// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, GEMINI_API_KEY, GEMINI_BASE_URL). A provider
// from the environment is added only when the file declares none with that name.
// A leading "~/" in dataDir, workspace and log.file is expanded to the user's home.
func ApplyDefaults(c *Config, env func(string) string) {
	if env == nil {
		env = os.Getenv
	}
	if c.Home == "" {
		c.Home = homeDir(env)
	}
	c.DataDir = orDefault(tilde(c.DataDir, env), filepath.Join(c.Home, "data"))
	c.Log.File = tilde(c.Log.File, env)
	c.Log.Level = orDefault(c.Log.Level, DefaultLogLevel)
	if c.Backup.Keep == 0 {
		c.Backup.Keep = DefaultBackupKeep
	}
	c.defaultGateway(env)

	for _, p := range envProviders {
		if _, ok := c.Providers[p.name]; ok {
			continue
		}
		key, url := env(p.keyVar), env(p.urlVar)
		if key == "" && url == "" {
			continue
		}
		if c.Providers == nil {
			c.Providers = map[string]ProviderConfig{}
		}
		c.Providers[p.name] = ProviderConfig{Type: p.name, BaseURL: url, APIKey: key}
	}
	for name, p := range c.Providers {
		p.Type = orDefault(p.Type, name)
		c.Providers[name] = p
	}

	if len(c.Agents) == 0 {
		c.Agents = []AgentConfig{{}}
	}
	model := orDefault(env("REEF_MODEL"), c.defaultModel())
	for i := range c.Agents {
		a := &c.Agents[i]
		if i == 0 && a.ID == "" {
			a.ID = "main"
		}
		a.Model = orDefault(a.Model, model)
		if a.Workspace == "" {
			a.Workspace = filepath.Join(c.Home, "workspace")
			if i > 0 {
				a.Workspace += "-" + a.ID
			}
		}
		a.Workspace = tilde(a.Workspace, env)
		positive(&a.Limits.MaxToolCalls, DefaultMaxToolCalls)
		positive(&a.Limits.TurnTimeoutSeconds, DefaultTurnTimeoutSeconds)
		positive(&a.Limits.MaxReplyChunks, DefaultMaxReplyChunks)
		positive(&a.Limits.LoopStopAt, DefaultLoopStopAt)
		positive(&a.Limits.LoopWarnAt, min(DefaultLoopWarnAt, max(1, a.Limits.LoopStopAt/2)))
	}

	channelsFromEnv(&c.Channels, env)
	searchFromEnv(&c.Tools.Web.Search, env)
	c.MCP.applyDefaults()

	positive(&c.LLM.MaxRetries, DefaultMaxRetries)
	positive(&c.LLM.IdleTimeoutSeconds, DefaultIdleTimeoutSeconds)
	positive(&c.LLM.MaxRetryAfterSeconds, DefaultMaxRetryAfterSeconds)
	positive(&c.LLM.MaxAnswerChars, DefaultMaxAnswerChars)
	positive(&c.LLM.StreamTimeoutSeconds, DefaultStreamTimeoutSeconds)
	positive(&c.LLM.OutageWaitMinutes, DefaultOutageWaitMinutes)
	positive(&c.Session.IdleMinutes, DefaultIdleMinutes)
	c.Session.DMScope = orDefault(c.Session.DMScope, DefaultDMScope)
	if c.Session.RateLimit.Messages == nil {
		n := DefaultRateLimitMessages
		c.Session.RateLimit.Messages = &n
	}
	positive(&c.Session.RateLimit.PerSeconds, DefaultRateLimitPerSeconds)
	positive(&c.Tools.Exec.TimeoutSeconds, DefaultExecTimeoutSeconds)
	positive(&c.Tools.Exec.MaxTimeoutSeconds, DefaultExecMaxTimeout)
	positive(&c.Tools.Exec.MaxOutputBytes, DefaultExecMaxOutputBytes)
	c.Tools.Exec.Sandbox = orDefault(c.Tools.Exec.Sandbox, DefaultExecSandbox)
	c.Tools.Exec.Approvals = orDefault(c.Tools.Exec.Approvals, DefaultExecApprovals)
	positive(&c.Tools.Exec.ApprovalTimeoutSeconds, DefaultApprovalTimeout)
	positive(&c.Tools.Exec.Limits.Processes, DefaultExecProcesses)
	positive(&c.Tools.Exec.Limits.FileSizeMB, DefaultExecFileSizeMB)
	positive(&c.Tools.Exec.Limits.CPUSeconds, DefaultExecCPUSeconds)
	positive(&c.Tools.Exec.Limits.MemoryMB, DefaultExecMemoryMB)
	bg := &c.Tools.Exec.Background
	positive(&bg.MaxRunning, DefaultExecBackgroundRunning)
	positive(&bg.MaxTotal, DefaultExecBackgroundTotal)
	positive(&bg.MaxKept, DefaultExecBackgroundKept)
	positive(&bg.KeepFinishedMinutes, DefaultExecBackgroundKeepMins)
	positive(&bg.OutputBytes, DefaultExecBackgroundOutput)
}

// defaultModel is the model of the first usable provider among openai, anthropic, gemini.
func (c *Config) defaultModel() string {
	for _, p := range envProviders {
		if pc, ok := c.Providers[p.name]; ok && pc.usable() {
			return p.name + "/" + p.model
		}
	}
	return ""
}

// usable reports whether the provider has something to connect with: a key or a base URL
// (local servers such as Ollama and vLLM need no key).
func (p ProviderConfig) usable() bool { return p.APIKey != "" || p.BaseURL != "" }

// homeDir is REEF_HOME, else ~/.reef.
func homeDir(env func(string) string) string {
	if h := env("REEF_HOME"); h != "" {
		return tilde(h, env)
	}
	return filepath.Join(userHome(env), ".reef")
}

func userHome(env func(string) string) string {
	if h := env("HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "."
}

// tilde expands a leading "~/" (or a lone "~") to the user's home directory.
func tilde(p string, env func(string) string) string {
	if p == "~" {
		return userHome(env)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(userHome(env), rest)
	}
	return p
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// positive sets *v to def when it is zero. Negative values are left for Validate to report.
func positive(v *int, def int) {
	if *v == 0 {
		*v = def
	}
}

// searchEnv names the variable that holds each search provider's key (searxng: its URL).
var searchEnv = []struct{ provider, env string }{
	{"brave", "BRAVE_API_KEY"}, {"tavily", "TAVILY_API_KEY"}, {"searxng", "SEARXNG_URL"},
}

// searchFromEnv chooses a web_search provider by the first variable set when the file names
// none, and fills a named provider's key (or SearXNG's URL) from its variable.
func searchFromEnv(s *WebSearchConfig, env func(string) string) {
	if s.Provider == "" && s.APIKey == "" && s.BaseURL == "" {
		for _, e := range searchEnv {
			if env(e.env) != "" {
				s.Provider = e.provider
				break
			}
		}
	}
	for _, e := range searchEnv {
		switch {
		case s.Provider != e.provider:
		case e.provider == "searxng" && s.BaseURL == "":
			s.BaseURL = env(e.env)
		case e.provider != "searxng" && s.APIKey == "":
			s.APIKey = env(e.env)
		}
	}
}

// channelsFromEnv adds a platform block for each token variable set when the file has none.
func channelsFromEnv(ch *ChannelsConfig, env func(string) string) {
	if tok := env("TELEGRAM_BOT_TOKEN"); tok != "" && ch.Telegram == nil {
		ch.Telegram = &TelegramConfig{BotToken: tok}
	}
	if tok := env("DISCORD_BOT_TOKEN"); tok != "" && ch.Discord == nil {
		ch.Discord = &DiscordConfig{Token: tok}
	}
	if id, secret := env("FEISHU_APP_ID"), env("FEISHU_APP_SECRET"); id != "" && secret != "" && ch.Feishu == nil {
		ch.Feishu = &FeishuConfig{AppID: id, AppSecret: secret}
	}
	if bot, app := env("SLACK_BOT_TOKEN"), env("SLACK_APP_TOKEN"); bot != "" && app != "" && ch.Slack == nil {
		ch.Slack = &SlackConfig{BotToken: bot, AppToken: app}
	}
	if s := ch.Slack; s != nil {
		s.Mode = orDefault(s.Mode, "socket")
		s.EventsPath = orDefault(s.EventsPath, "/slack/events")
		for name, a := range s.Accounts {
			if a != nil {
				a.EventsPath = orDefault(a.EventsPath, "/slack/events/"+name)
			}
		}
	}
	if t := ch.Telegram; t != nil {
		t.Mode = orDefault(t.Mode, "polling")
		t.WebhookListen = orDefault(t.WebhookListen, "127.0.0.1:8443")
	}
	if f := ch.Feishu; f != nil {
		f.Domain = orDefault(f.Domain, "feishu")
		f.Mode = orDefault(f.Mode, "websocket")
		f.WebhookListen = orDefault(f.WebhookListen, "127.0.0.1:9000")
		f.WebhookPath = orDefault(f.WebhookPath, "/feishu/events")
		for _, a := range f.Accounts {
			if a != nil {
				a.WebhookPath = orDefault(a.WebhookPath, "/feishu/events")
			}
		}
	}
}
