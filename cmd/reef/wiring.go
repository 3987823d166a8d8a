package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/tools"
)

// loadConfig loads the configuration from path, or from $REEF_HOME/reef.yaml when path is "".
func loadConfig(path string) (*configs.Config, error) {
	if path != "" {
		return configs.Load(path, os.Getenv)
	}
	return configs.LoadDefault(os.Getenv)
}

// openStore opens the database, turning a lock conflict into a message a user can act on.
func openStore(cfg *configs.Config) (*bolt.Store, error) {
	path := filepath.Join(cfg.DataDir, "reef.db")
	st, err := bolt.Open(path, bolt.Options{})
	if errors.Is(err, persistence.ErrLocked) {
		return nil, fmt.Errorf("another reef is already running with the data directory %s (stop it first, or set REEF_HOME to use another one)", cfg.DataDir)
	}
	return st, damaged(err)
}

// damaged turns Open's error for a damaged database into what happened and what to do;
// other errors pass as they are.
func damaged(err error) error {
	if d, ok := errors.AsType[*bolt.DamagedError](err); ok {
		return fmt.Errorf("the database %s is damaged: %v\n%s", d.Path, d.Problem, bolt.DamageHelp(d.Path))
	}
	if errors.Is(err, bolt.ErrEmpty) {
		return errors.New(emptyHelp(err))
	}
	return err
}

// emptyHelp explains Open's refusal of an existing zero-length database (err wraps
// bolt.ErrEmpty and names the file).
func emptyHelp(err error) string {
	return err.Error() + "\n" +
		"reef did not start on it: an empty reef.db usually means a crash or a full disk emptied it,\n" +
		"and starting afresh would drop your conversations, pairings and cron jobs without a word.\n" +
		"To go on, put back a backup (`reef restore FILE`), or start with an empty database:\n" +
		"  reef init --fresh      moves the empty file aside (reef.db.empty-<time>) and creates a new one"
}

// buildAgents turns the configured agents into runnable ones: providers wrapped with the
// global LLM cap, prompt-based tool calls where configured, retries and failover; tools and
// their policy; workspaces initialised on first use.
func buildAgents(cfg *configs.Config) ([]*actors.Agent, error) {
	idle := time.Duration(cfg.LLM.IdleTimeoutSeconds) * time.Second
	sem := providers.NewSemaphore(cfg.LLM.MaxConcurrent)
	clients := map[string]providers.Provider{}
	for name, pc := range cfg.Providers {
		p, err := newProvider(name, pc, idle)
		if err != nil {
			return nil, err
		}
		clients[name] = p
	}
	registry, err := tools.NewRegistry(newTools(cfg)...)
	if err != nil {
		return nil, err
	}
	// target is the client chain for one model: the global cap, prompt-mode tools, retries.
	target := func(ref string) (providers.Target, error) {
		prov, model, err := configs.SplitModel(ref)
		if err != nil {
			return providers.Target{}, err
		}
		client, ok := clients[prov]
		if !ok {
			return providers.Target{}, fmt.Errorf("model %s: no provider %q configured", ref, prov)
		}
		if w := cfg.Model(ref).ContextWindow; w < agent.MinContextWindow {
			return providers.Target{}, fmt.Errorf("model %s has a context window of %d tokens; reef needs at least %d: "+
				"choose a model with a larger window, or set models.%s.contextWindow if its real window is larger",
				ref, w, agent.MinContextWindow, ref)
		}
		p := providers.Limit(client, sem)
		if cfg.Model(ref).ToolMode == "prompt" {
			p = providers.PromptTools(p)
		}
		p = providers.Retry(p, providers.RetryConfig{
			MaxRetries:    cfg.LLM.MaxRetries,
			MaxRetryAfter: time.Duration(cfg.LLM.MaxRetryAfterSeconds) * time.Second,
		})
		return providers.Target{Label: ref, Provider: p, Model: model}, nil
	}
	var out []*actors.Agent
	for _, ac := range cfg.Agents {
		var targets []providers.Target
		for _, ref := range append([]string{ac.Model}, ac.Fallbacks...) {
			t, err := target(ref)
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w", ac.ID, err)
			}
			targets = append(targets, t)
		}
		for _, ref := range ac.Models {
			if _, err := target(ref); err != nil {
				return nil, fmt.Errorf("agent %s: models: %w", ac.ID, err)
			}
		}
		policy, err := tools.NewPolicy(ac.Tools.Allow, ac.Tools.Deny, registry.Names())
		if err != nil {
			return nil, fmt.Errorf("agent %s: tools: %w", ac.ID, err)
		}
		if _, err := agent.InitWorkspace(ac.Workspace); err != nil {
			return nil, fmt.Errorf("agent %s: workspace: %w", ac.ID, err)
		}
		mc := cfg.Model(ac.Model)
		fallbacks := targets[1:]
		out = append(out, &actors.Agent{
			ID: ac.ID, Name: ac.Name, Workspace: ac.Workspace, Model: ac.Model,
			Provider: providers.Failover(targets...), Tools: registry, Policy: policy,
			ContextWindow: mc.ContextWindow, MaxTokens: mc.MaxTokens, Location: time.Local,
			Limits: actors.Limits{
				MaxToolCalls:     ac.Limits.MaxToolCalls,
				TurnTimeout:      time.Duration(ac.Limits.TurnTimeoutSeconds) * time.Second,
				LoopWarnAt:       ac.Limits.LoopWarnAt,
				LoopStopAt:       ac.Limits.LoopStopAt,
				DailyTokenBudget: ac.Limits.DailyTokenBudget,
				MaxAnswerChars:   cfg.LLM.MaxAnswerChars,
				StreamTimeout:    time.Duration(cfg.LLM.StreamTimeoutSeconds) * time.Second,
				MaxReplyChunks:   ac.Limits.MaxReplyChunks,
			},
			Models: append(append([]string(nil), ac.Fallbacks...), ac.Models...),
			// A session that switched model keeps the agent's fallbacks behind it.
			ModelFor: func(label string) (actors.ModelChoice, error) {
				t, err := target(label)
				if err != nil {
					return actors.ModelChoice{}, err
				}
				m := cfg.Model(label)
				return actors.ModelChoice{Label: label, Provider: providers.Failover(append([]providers.Target{t}, fallbacks...)...),
					ContextWindow: m.ContextWindow, MaxTokens: m.MaxTokens}, nil
			},
			Compaction: actors.Compaction{
				ReserveTokens:    ac.Compaction.ReserveTokens,
				KeepRecentTokens: ac.Compaction.KeepRecentTokens,
				MemoryFlush:      ac.Compaction.Flush(),
			},
			Subagents: subagentLimits(ac.Subagents),
		})
	}
	return out, nil
}

// sessionSettings maps the session block of the configuration.
func sessionSettings(cfg *configs.Config) actors.SessionSettings {
	s := cfg.Session
	byChannel := map[string]persistence.QueueSettings{}
	for name, q := range s.QueueByChannel {
		byChannel[name] = queueSettings(q)
	}
	set := actors.SessionSettings{
		IdleAfter:        time.Duration(s.IdleMinutes) * time.Minute,
		DMScope:          s.DMScope,
		Queue:            queueSettings(s.Queue),
		QueueByChannel:   byChannel,
		DailyTokenBudget: s.DailyTokenBudget,
		RateLimit:        actors.RateLimit{Per: time.Duration(s.RateLimit.PerSeconds) * time.Second},
	}
	if s.RateLimit.Messages != nil {
		set.RateLimit.Messages = *s.RateLimit.Messages
	}
	return set
}

// running is a running actor tree and the database under it.
type running struct {
	*actors.Runtime
	store *bolt.Store
	stop  func() // stops the actors, then closes the database
}

// startRuntime opens the store, builds the agents and starts the actor tree with chans. The
// store is opened first, so a second reef on the same data directory fails before it
// touches anything else.
func startRuntime(cfg *configs.Config, log zerolog.Logger, set channelSet) (*running, error) {
	store, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	agents, err := buildAgents(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	grants, err := toolGrants(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	for _, note := range cfg.Notes() {
		log.Warn().Msg(note)
	}
	rt, err := actors.Start(&actors.Deps{
		Log: log, Store: store, Agents: agents, Channels: set.chans, Access: set.access, Secrets: cfg.Secrets(),
		Session: sessionSettings(cfg), ToolGrants: grants,
	}, actors.WithTimer(timerSettings(cfg)))
	if err != nil {
		store.Close()
		return nil, err
	}
	stop := func() {
		if err := rt.Stop(15 * time.Second); err != nil {
			log.Error().Err(err).Msg("shutdown")
		}
		if err := store.Close(); err != nil {
			log.Error().Err(err).Msg("close database")
		}
	}
	return &running{Runtime: rt, store: store, stop: stop}, nil
}

// settle waits until every message the session accepted was answered and every reply marked
// sent, and reports whether that happened. The terminal knows only that a run ended: a run
// recovered from an earlier exit can end while this session's last line still waits. A run
// ends within runLimit; a reply is marked sent within seconds, else it stays in the outbox
// and settle gives up after sendLimit. A value on abort ends the wait at once.
func (r *running) settle(sessionKey string, runLimit, sendLimit time.Duration, abort <-chan os.Signal) bool {
	answeredBy := time.Now().Add(runLimit)
	var sentBy time.Time
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var inbox, outbox int
		err := r.store.View(func(rd persistence.Reader) error {
			in, err := rd.Inbox(sessionKey)
			if err != nil {
				return err
			}
			out, err := rd.Outbox(sessionKey)
			inbox, outbox = len(in), len(out)
			return err
		})
		now := time.Now()
		switch {
		case err != nil:
			return false
		case inbox == 0 && outbox == 0:
			return true
		case inbox > 0:
			sentBy = time.Time{}
		case sentBy.IsZero():
			sentBy = now.Add(sendLimit)
		}
		if now.After(answeredBy) || !sentBy.IsZero() && now.After(sentBy) {
			return false
		}
		select {
		case <-abort:
			return false
		case <-tick.C:
		}
	}
}

func queueSettings(q configs.QueueConfig) persistence.QueueSettings {
	return persistence.QueueSettings{Mode: q.Mode, Debounce: q.DebounceMs, Cap: q.Cap, Drop: q.Drop}
}

// subagentLimits maps an agent's subagents block.
func subagentLimits(c configs.SubagentsConfig) actors.SubagentLimits {
	c = c.WithDefaults()
	return actors.SubagentLimits{AllowAgents: c.AllowAgents, MaxSpawnDepth: c.MaxSpawnDepth, MaxChildren: c.MaxChildren,
		MaxConcurrent: c.MaxConcurrent, RunTimeout: time.Duration(c.RunTimeoutSeconds) * time.Second,
		ArchiveAfter: time.Duration(c.ArchiveAfterMinutes) * time.Minute}
}
