package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/telegram"
	"github.com/reefgw/reef/channels/terminal"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/fs"
	"github.com/reefgw/reef/tools/message"
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

// newTools builds the built-in tools every agent may be offered (its policy decides).
func newTools(cfg *configs.Config) []tools.Tool {
	ex := cfg.Tools.Exec
	return append(fs.Tools(fs.Config{}), exec.New(exec.Config{
		DefaultTimeout: time.Duration(ex.TimeoutSeconds) * time.Second,
		MaxTimeout:     time.Duration(ex.MaxTimeoutSeconds) * time.Second,
		MaxOutput:      ex.MaxOutputBytes,
		Secrets:        cfg.Secrets(),
		Helper:         sandboxHelper(),
		Sandbox:        ex.Sandbox,
		Writable:       ex.Writable,
		Limits:         execLimits(ex.Limits),
	}), cron.New(), message.New())
}

// sandboxHelper is how the exec tool runs `reef exec-sandbox`: this very binary.
func sandboxHelper() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil // the tool then runs commands without supervisor or sandbox
	}
	return []string{exe, "exec-sandbox"}
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
	chans  map[string]channels.Channel
	access map[string]*access.Rules
}

// newChannels builds every configured channel. This is the one place that knows every
// channel implementation; constructors only validate, nothing connects until the gateway runs.
func newChannels(cfg *configs.Config, log zerolog.Logger) (channelSet, error) {
	set := channelSet{chans: map[string]channels.Channel{}, access: map[string]*access.Rules{}}
	c := cfg.Channels
	if t := c.Terminal; t != nil && t.Enabled {
		set.chans["terminal"] = terminal.New(terminal.Config{In: os.Stdin, Out: os.Stdout})
	}
	if t := c.Telegram; t != nil {
		bot, err := telegram.New(telegram.Config{Token: t.BotToken, APIRoot: t.APIRoot, Mode: t.Mode,
			WebhookURL: t.WebhookURL, WebhookSecret: t.WebhookSecret, WebhookListen: t.WebhookListen}, log)
		if err != nil {
			return set, err
		}
		set.add("telegram", bot, t.Access())
	}
	if d := c.Discord; d != nil {
		bot, err := discord.New(discord.Config{Token: d.Token, APIBase: d.APIBase,
			StateFile: filepath.Join(cfg.DataDir, "discord-state.json")}, log)
		if err != nil {
			return set, err
		}
		set.add("discord", bot, d.Access())
	}
	if f := c.Feishu; f != nil {
		bot, err := feishu.New(feishu.Config{AppID: f.AppID, AppSecret: f.AppSecret, Domain: f.Domain, Mode: f.Mode,
			VerificationToken: f.VerificationToken, EncryptKey: f.EncryptKey,
			WebhookListen: f.WebhookListen, WebhookPath: f.WebhookPath}, log)
		if err != nil {
			return set, err
		}
		set.add("feishu", bot, f.Access())
	}
	return set, nil
}

func (s channelSet) add(name string, ch channels.Channel, a configs.AccessConfig) {
	s.chans[name] = ch
	s.access[name] = &access.Rules{DMPolicy: a.DMPolicy, AllowFrom: a.AllowFrom, Groups: a.Groups,
		RequireMention: a.RequireMention}
}
