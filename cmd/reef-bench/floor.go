//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/cron"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/fs"
	"github.com/reefgw/reef/tools/message"
)

// floorCommand is the hidden subcommand that runs the floor gateway, reef-bench's child
// when -floor is given.
const floorCommand = "floor-gateway"

const floorUsage = `reef-bench floor-gateway — the floor gateway that reef-bench -floor runs as its child

Usage:
  reef-bench floor-gateway [-config FILE]

It reads reef.yaml ($REEF_HOME/reef.yaml by default) and answers Telegram messages with the
first agent's model, with nothing in between. Not meant to be run by hand.

Flags:
`

// runFloorGateway is the gateway that reef-bench -floor measures instead of reef: reef's own
// Telegram channel and model client with nothing in between. Each message goes to the model
// with the system prompt and tools of the agent's first turn, and the answer goes back as one
// message. No storage, no sessions or actors, no drafts or typing, and the next poll does not
// wait for anything to be written. What it takes is the floor of the machine and of the
// bench's fakes: the time reef takes above it is reef's.
func runFloorGateway(args []string, stdout, stderr io.Writer) int {
	start := time.Now()
	flags := flag.NewFlagSet("reef-bench "+floorCommand, flag.ContinueOnError)
	configPath := flags.String("config", "", "config file (default $REEF_HOME/reef.yaml)")
	if code, done := parseFlags(flags, args, floorUsage, stdout, stderr); done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "reef-bench %s: %v\n", floorCommand, err)
		return 1
	}
	cfg, err := loadFloorConfig(*configPath)
	if err != nil {
		return fail(err)
	}
	if cfg.Channels.Telegram == nil {
		return fail(errors.New("needs channels.telegram"))
	}
	log := zerolog.New(stderr).With().Timestamp().Logger()
	t := cfg.Channels.Telegram
	bot, err := telegram.New(telegram.Config{Token: t.BotToken, APIRoot: t.APIRoot}, log)
	if err != nil {
		return fail(err)
	}
	f, err := newFloor(cfg, bot, log)
	if err != nil {
		return fail(err)
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- bot.RunBatches(ctx, func(_ context.Context, ins []messages.Inbound) []error {
			for _, in := range ins {
				f.wg.Go(func() { f.answer(ctx, in) })
			}
			return make([]error, len(ins))
		})
	}()
	log.Info().Dur("startup", time.Since(start)).Msg("reef gateway ready (bench floor)")
	select {
	case <-ctx.Done():
	case err = <-done:
		log.Error().Err(err).Msg("telegram stopped")
	}
	cancel()
	f.wg.Wait()
	if err != nil {
		return 1
	}
	return 0
}

// loadFloorConfig loads reef.yaml from path, or from $REEF_HOME when path is "".
func loadFloorConfig(path string) (*configs.Config, error) {
	if path != "" {
		return configs.Load(path, os.Getenv)
	}
	return configs.LoadDefault(os.Getenv)
}

// floor answers messages as cheaply as reef's pieces allow.
type floor struct {
	agentID   string
	agentName string
	modelRef  string // "provider/model"
	model     string
	maxTokens int
	provider  providers.Provider
	bot       channels.Channel
	log       zerolog.Logger
	specs     []messages.ToolSpec
	stable    string // the system prompt's stable prefix, as an agent's first turn has it
	wg        sync.WaitGroup
}

// newFloor builds the first agent of cfg as reef gateway does (cmd/reef's buildAgents): its
// model's client behind the global LLM cap and retries, the built-in tools its policy allows,
// its workspace initialised.
func newFloor(cfg *configs.Config, bot channels.Channel, log zerolog.Logger) (*floor, error) {
	if len(cfg.Agents) == 0 {
		return nil, errors.New("no agent configured")
	}
	ac := cfg.Agents[0]
	provName, model, err := configs.SplitModel(ac.Model)
	if err != nil {
		return nil, err
	}
	pc, ok := cfg.Providers[provName]
	if !ok || pc.Type != "openai" {
		return nil, fmt.Errorf("agent %s: the floor speaks to openai providers only, not %q", ac.ID, provName)
	}
	idle := time.Duration(cfg.LLM.IdleTimeoutSeconds) * time.Second
	var p providers.Provider = openai.New(openai.Config{Name: provName, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle})
	p = providers.Adaptive(p, providers.NewAdaptiveLimiter(providers.AdaptiveConfig{Ceiling: cfg.LLM.MaxConcurrent}))
	p = providers.Retry(p, providers.RetryConfig{
		MaxRetries:    cfg.LLM.MaxRetries,
		MaxRetryAfter: time.Duration(cfg.LLM.MaxRetryAfterSeconds) * time.Second,
	})
	ex := cfg.Tools.Exec
	registry, err := tools.NewRegistry(append(fs.Tools(fs.Config{}), exec.New(exec.Config{
		DefaultTimeout: time.Duration(ex.TimeoutSeconds) * time.Second,
		MaxTimeout:     time.Duration(ex.MaxTimeoutSeconds) * time.Second,
		MaxOutput:      ex.MaxOutputBytes,
		Secrets:        cfg.Secrets(),
	}), cron.New(), message.New())...)
	if err != nil {
		return nil, err
	}
	policy, err := tools.NewPolicy(ac.Tools.Allow, ac.Tools.Deny, registry.Names())
	if err != nil {
		return nil, err
	}
	if _, err := agent.InitWorkspace(ac.Workspace); err != nil {
		return nil, err
	}
	ws, err := agent.LoadWorkspace(ac.Workspace)
	if err != nil {
		return nil, err
	}
	f := &floor{agentID: ac.ID, agentName: ac.Name, modelRef: ac.Model, model: model,
		maxTokens: cfg.Model(ac.Model).MaxTokens, provider: p, bot: bot, log: log,
		specs: registry.Specs(policy)}
	f.stable = agent.StablePrompt(agent.PromptInput{AgentName: ac.Name, ChatType: string(messages.ChatDirect),
		Tools: f.specs, Workspace: ws})
	return f, nil
}

// answer sends in to the model and its answer back, trying each a few times.
func (f *floor) answer(ctx context.Context, in messages.Inbound) {
	tail := agent.VolatilePrompt(agent.PromptInput{AgentID: f.agentID, Model: f.modelRef,
		SessionKey: "floor:" + in.ChatID, Channel: "telegram", ChatType: string(in.ChatType),
		Now: time.Now(), Location: time.Local, Host: runtime.GOOS + "/" + runtime.GOARCH})
	req := providers.Request{Model: f.model, System: f.stable, SystemStable: len(f.stable), SystemTail: tail,
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: in.Text}},
		Tools:    f.specs, MaxTokens: f.maxTokens}
	var text string
	err := retry(ctx, func() error {
		var err error
		text, err = f.complete(ctx, req)
		return err
	})
	if err == nil {
		err = retry(ctx, func() error {
			_, err := f.bot.Send(ctx, messages.Outbound{Channel: "telegram", ChatID: in.ChatID,
				ReplyToID: in.MessageID, Text: text})
			return err
		})
	}
	if err != nil && ctx.Err() == nil {
		f.log.Error().Err(err).Str("chat", in.ChatID).Msg("bench floor: message not answered")
	}
}

// complete streams one answer and returns its text.
func (f *floor) complete(ctx context.Context, req providers.Request) (string, error) {
	stream, err := f.provider.Stream(ctx, req)
	if err != nil {
		return "", err
	}
	defer stream.Close()
	var text strings.Builder
	for {
		ev, err := stream.Next()
		if errors.Is(err, io.EOF) {
			return text.String(), nil
		}
		if err != nil {
			return "", err
		}
		if ev.Kind == providers.EventText {
			text.WriteString(ev.Text)
		}
	}
}

func retry(ctx context.Context, do func() error) error {
	var err error
	for range 3 {
		if err = do(); err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
