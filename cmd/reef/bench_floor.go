package main

import (
	"context"
	"errors"
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

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// runBenchFloor is `reef bench-floor`, the gateway that `reef bench -floor` measures instead
// of reef: reef's own Telegram channel and model client with nothing in between. Each message
// goes to the model with the system prompt and tools of the agent's first turn, and the
// answer goes back as one message. No storage, no sessions or actors, no drafts or typing,
// and the next poll does not wait for anything to be written. What it takes is the floor of
// the machine and of the bench's fakes: the time reef takes above it is reef's.
func runBenchFloor(args []string, stderr io.Writer) int {
	start := time.Now()
	cfg, log, closeLog, code := startCommand("bench-floor", args, false, stderr)
	if code != 0 {
		return code
	}
	defer closeLog()
	if cfg.Channels.Telegram == nil {
		fmt.Fprintln(stderr, "reef bench-floor: needs channels.telegram")
		return 2
	}
	t := cfg.Channels.Telegram
	bot, err := telegram.New(telegram.Config{Token: t.BotToken, APIRoot: t.APIRoot}, log)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	agents, err := buildAgents(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
	}
	f, err := newFloor(agents[0], bot, log)
	if err != nil {
		fmt.Fprintf(stderr, "reef: %v\n", err)
		return 1
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

// floor answers messages as cheaply as reef's pieces allow.
type floor struct {
	agent  *actors.Agent
	bot    channels.Channel
	log    zerolog.Logger
	model  string
	specs  []messages.ToolSpec
	stable string // the system prompt's stable prefix, as an agent's first turn has it
	wg     sync.WaitGroup
}

func newFloor(a *actors.Agent, bot channels.Channel, log zerolog.Logger) (*floor, error) {
	ws, err := agent.LoadWorkspace(a.Workspace) // buildAgents initialised it
	if err != nil {
		return nil, err
	}
	f := &floor{agent: a, bot: bot, log: log}
	_, f.model, _ = strings.Cut(a.Model, "/")
	if a.Tools != nil {
		f.specs = a.Tools.Specs(a.Policy)
	}
	f.stable = agent.StablePrompt(agent.PromptInput{AgentName: a.Name, ChatType: string(messages.ChatDirect),
		Tools: f.specs, Workspace: ws})
	return f, nil
}

// answer sends in to the model and its answer back, trying each a few times.
func (f *floor) answer(ctx context.Context, in messages.Inbound) {
	tail := agent.VolatilePrompt(agent.PromptInput{AgentID: f.agent.ID, Model: f.agent.Model,
		SessionKey: "floor:" + in.ChatID, Channel: "telegram", ChatType: string(in.ChatType),
		Now: time.Now(), Location: f.agent.Location, Host: runtime.GOOS + "/" + runtime.GOARCH})
	req := providers.Request{Model: f.model, System: f.stable, SystemStable: len(f.stable), SystemTail: tail,
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: in.Text}},
		Tools:    f.specs, MaxTokens: f.agent.MaxTokens}
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
	stream, err := f.agent.Provider.Stream(ctx, req)
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
