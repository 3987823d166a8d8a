package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/telegram"
	"github.com/reefgw/reef/channels/terminal"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/memory"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/streaming"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/fs"
	memtools "github.com/reefgw/reef/tools/memory"
	"github.com/reefgw/reef/tools/message"
	"github.com/reefgw/reef/tools/plan"
	"github.com/reefgw/reef/tools/sessions"
	"github.com/reefgw/reef/tools/web"
)

// newProvider builds the client for one configured provider. This switch is the one place
// that knows every provider implementation.
func newProvider(name string, pc configs.ProviderConfig, idle time.Duration) (providers.Provider, error) {
	switch pc.Type {
	case "openai":
		return openai.New(openai.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle}), nil
	case "anthropic":
		return anthropic.New(anthropic.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle}), nil
	case "gemini":
		return gemini.New(gemini.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle}), nil
	}
	return nil, fmt.Errorf("provider %q: unknown type %q (use openai, anthropic or gemini)", name, pc.Type)
}

// newEmbedder builds the embeddings client of a configured provider (memory search), or nil
// when its type serves none. baseURL, when set, replaces the provider's endpoint.
func newEmbedder(name, typ string, pc configs.ProviderConfig, baseURL string, retry providers.RetryConfig) providers.Embedder {
	if baseURL == "" {
		baseURL = pc.BaseURL
	}
	switch typ {
	case "openai":
		return providers.RetryEmbed(openai.New(openai.Config{Name: name, BaseURL: baseURL, APIKey: pc.APIKey}), retry)
	case "gemini":
		return providers.RetryEmbed(gemini.New(gemini.Config{Name: name, BaseURL: baseURL, APIKey: pc.APIKey}), retry)
	}
	return nil
}

// newTranscriber builds the transcription client of a configured provider, or nil when its
// type offers none. A file's transcription may take 5 minutes (a long recording), retries
// included. OpenAI-compatible endpoints get /audio/transcriptions; Gemini gets
// generateContent with the audio inline, retried like model calls (retry: llm.maxRetries,
// Retry-After). maxBytes caps the audio read
// into memory for it (0: media's default audio cap).
func newTranscriber(name, typ string, pc configs.ProviderConfig, model string, maxBytes int64, retry providers.RetryConfig) media.Transcriber {
	client := &http.Client{Timeout: 5 * time.Minute}
	switch typ {
	case "openai":
		base := pc.BaseURL
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		return &media.OpenAITranscriber{BaseURL: base, APIKey: pc.APIKey, Model: model, Client: client}
	case "gemini":
		g := gemini.New(gemini.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, HTTPClient: client})
		return &media.ModelTranscriber{Client: providers.RetryTranscribe(g, retry), Model: model, MaxBytes: maxBytes,
			Timeout: client.Timeout}
	}
	return nil
}

// newTools builds the built-in tools every agent may be offered (its policy decides). mem
// serves the memory tools (nil: they answer that memory search is off); procs owns exec's
// background processes (nil: a fresh owner, for callers that only name the tools).
func newTools(cfg *configs.Config, mem *memory.Manager, procs *exec.Processes) []tools.Tool {
	ex := cfg.Tools.Exec
	var indexes memtools.Indexes
	// The agent reads the shared and the bundled skills where reef lists them.
	fsCfg := fs.Config{ReadOnlyDirs: []string{managedSkillsDir(cfg), bundledSkillsDir(cfg)}}
	if mem != nil {
		indexes = mem
		fsCfg.Changed = func(ctx context.Context, env tools.Env, rel string) { mem.Touch(ctx, env.AgentID, rel) }
	}
	ts := append(fs.Tools(fsCfg), memtools.Tools(indexes)...)
	if procs == nil {
		procs = exec.NewProcesses(processConfig(cfg))
	}
	return append(append(ts, exec.NewProcess(procs, ex.MaxOutputBytes), exec.New(exec.Config{
		DefaultTimeout: time.Duration(ex.TimeoutSeconds) * time.Second,
		MaxTimeout:     time.Duration(ex.MaxTimeoutSeconds) * time.Second,
		MaxOutput:      ex.MaxOutputBytes,
		Secrets:        cfg.Secrets(),
		Helper:         sandboxHelper(),
		Sandbox:        ex.Sandbox,
		Writable:       ex.Writable,
		Hidden:         []string{cfg.DataDir, backupsDir(cfg)}, // reef's own state: no command reaches it
		Limits:         execLimits(ex.Limits),
		Processes:      procs,
	}), cron.New(), message.New(), plan.New(), newWebFetch(cfg)), append(sessions.Tools(), newWebSearch(cfg)...)...)
}

// newWebSearch builds web_search for tools.web.search, or nothing when no provider is
// configured (the tool is then not offered; `reef doctor` says how to enable it).
func newWebSearch(cfg *configs.Config) []tools.Tool {
	s := cfg.Tools.Web.Search
	if s.Provider == "" {
		return nil
	}
	t, err := web.NewSearch(web.SearchConfig{Provider: s.Provider, APIKey: s.APIKey, BaseURL: s.BaseURL})
	if err != nil { // Validate reports what is missing first
		return nil
	}
	return []tools.Tool{t}
}

// newWebFetch builds web_fetch behind the SSRF guard of tools.web.
func newWebFetch(cfg *configs.Config) tools.Tool {
	guard, err := netguard.New(netguard.Config{AllowPrivate: cfg.Tools.Web.AllowPrivate})
	if err != nil { // Validate refuses such entries first; should one slip by, open nothing
		guard, _ = netguard.New(netguard.Config{})
	}
	f, err := web.NewFetch(web.Config{Guard: guard})
	if err != nil {
		panic(err) // only a nil guard fails
	}
	return f
}

// sandboxHelper is how the exec tool runs `reef exec-sandbox`: this very binary.
func sandboxHelper() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil // the tool then runs commands without supervisor or sandbox
	}
	return []string{exe, "exec-sandbox"}
}

// processConfig maps tools.exec.background onto exec's background processes.
func processConfig(cfg *configs.Config) exec.ProcessConfig {
	b := cfg.Tools.Exec.Background
	return exec.ProcessConfig{MaxRunning: b.MaxRunning, MaxTotal: b.MaxTotal, MaxKept: b.MaxKept,
		KeepFinished: time.Duration(b.KeepFinishedMinutes) * time.Minute, OutputBytes: b.OutputBytes}
}

func execLimits(l configs.ExecLimitsConfig) exec.Limits {
	bytes := func(n int) int64 {
		if n < 0 {
			return -1
		}
		return int64(n) << 20
	}
	return exec.Limits{Processes: l.Processes, FileSize: bytes(l.FileSizeMB), CPUSeconds: l.CPUSeconds, Memory: bytes(l.MemoryMB)}
}

// channelSet is the channels `reef gateway` runs and who may use each.
type channelSet struct {
	chans     map[string]channels.Channel
	access    map[string]*access.Rules
	streaming map[string]streaming.Settings // how each account shows a run while it goes
	gate      *workGate                     // cluster mode: who runs the inbound loops (cluster.go); nil on one node
}

// newChannels builds every configured channel. This is the one place that knows every
// channel implementation; constructors only validate, nothing connects until the gateway runs.
func newChannels(cfg *configs.Config, log zerolog.Logger) (channelSet, error) {
	set := channelSet{chans: map[string]channels.Channel{}, access: map[string]*access.Rules{},
		streaming: map[string]streaming.Settings{}}
	c := cfg.Channels
	if t := c.Terminal; t != nil && t.Enabled {
		set.chans["terminal"] = terminal.New(terminal.Config{In: os.Stdin, Out: os.Stdout})
	}
	media := mediaClient(cfg)
	var gate channels.Gate
	if cfg.Cluster.Enabled { // only the holder of an account's inbound loop receives (cluster.go)
		set.gate = newWorkGate()
		gate = set.gate
	}
	for _, a := range c.Accounts() {
		ch, err := newChannel(a, cfg.DataDir, media, gate, log)
		if err != nil {
			return set, err
		}
		set.add(channels.ID(a.Channel, a.Account), ch, a.Access())
		set.streaming[channels.ID(a.Channel, a.Account)] = a.Streaming()
	}
	return set, nil
}

// newChannel builds the client of one bot account.
func newChannel(a configs.ChannelAccount, dataDir string, media *http.Client, gate channels.Gate, log zerolog.Logger) (channels.Channel, error) {
	log = log.With().Str("account", a.Name()).Logger()
	switch {
	case a.Telegram != nil:
		t := a.Telegram
		return telegram.New(telegram.Config{Token: t.BotToken, APIRoot: t.APIRoot, Mode: t.Mode, Account: a.Account,
			WebhookURL: t.WebhookURL, WebhookSecret: t.WebhookSecret, WebhookListen: t.WebhookListen, MediaClient: media, Gate: gate}, log)
	case a.Discord != nil:
		d := a.Discord
		state := "discord-state.json" // the last message handled per channel, for the backfill
		if a.Account != "" {
			state = "discord-state-" + a.Account + ".json"
		}
		shards, _ := d.ShardCount() // checked by Validate
		cfg := discord.Config{Token: d.Token, APIBase: d.APIBase, StateFile: filepath.Join(dataDir, state), MediaClient: media,
			Gate: gate, Account: a.Account, Shards: shards}
		if g, ok := gate.(*workGate); ok && g != nil { // a cluster: the node taking a shard over reads the checkpoint
			cfg.State = sharedState{gate: g, key: "discord/" + a.Name()}
		}
		return discord.New(cfg, log)
	case a.Feishu != nil:
		f := a.Feishu
		return feishu.New(feishu.Config{AppID: f.AppID, AppSecret: f.AppSecret, Domain: f.Domain, Mode: f.Mode,
			VerificationToken: f.VerificationToken, EncryptKey: f.EncryptKey,
			WebhookListen: f.WebhookListen, WebhookPath: f.WebhookPath, MediaClient: media, Gate: gate, Account: a.Account}, log)
	case a.Slack != nil:
		s := a.Slack
		return slack.New(slack.Config{BotToken: s.BotToken, AppToken: s.AppToken, SigningSecret: s.SigningSecret,
			Mode: s.Mode, EventsListen: s.EventsListen, EventsPath: s.EventsPath, APIURL: s.APIURL, Account: a.Account,
			MediaClient: media, Buttons: s.Buttons}, log)
	}
	return nil, fmt.Errorf("%s: no platform", a.Path)
}

func (s channelSet) add(name string, ch channels.Channel, a configs.AccessConfig) {
	s.chans[name] = ch
	s.access[name] = &access.Rules{DMPolicy: a.DMPolicy, AllowFrom: a.AllowFrom, Groups: a.Groups,
		RequireMention: a.RequireMention}
}
