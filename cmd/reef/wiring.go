package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/internal/logring"
	"github.com/reefgw/reef/internal/metrics"
	"github.com/reefgw/reef/memory"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/routing"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
)

// loadConfig loads the configuration from path, or from $REEF_HOME/reef.yaml when path is "".
func loadConfig(path string) (*configs.Config, error) {
	if path != "" {
		return configs.Load(path, os.Getenv)
	}
	return configs.LoadDefault(os.Getenv)
}

// openStore opens the database storage.driver names (openPostgres in storage.go for
// postgres), turning a lock conflict into a message a user can act on.
func openStore(cfg *configs.Config) (persistence.Store, error) {
	return openStoreSaying(cfg, sayOnStderr)
}

// openStoreSaying is openStore telling say about an upgrade of the store's format (upgrade.go).
func openStoreSaying(cfg *configs.Config, say func(string)) (persistence.Store, error) {
	if cfg.Storage.Postgres() {
		st, err := openPostgres(cfg, !cfg.Cluster.Enabled) // a cluster's nodes share it
		if err != nil {
			return nil, err // not a nil *postgres.Store in a non-nil interface
		}
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil { // the control socket and journals live there
			st.Close()
			return nil, fmt.Errorf("data directory: %w", err)
		}
		return st, nil
	}
	path := filepath.Join(cfg.DataDir, "reef.db")
	st, err := bolt.Open(path, bolt.Options{BeforeUpgrade: backupBeforeUpgrade(cfg, say)})
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
	return newerFormat(err)
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

// buildAgents turns the configured agents into runnable ones: providers wrapped with their
// endpoint's adaptive limit, prompt-based tool calls where configured, retries, the endpoint's
// circuit breaker (from outages; nil for none) and failover; tools and their policy; workspaces
// initialised on first use. mem holds the memory indexes (nil: none), met the metrics (nil:
// none), procs exec's background processes (nil: a fresh owner). mcp are the MCP servers,
// whose tools join the built-in ones as they list them, at start and later.
func buildAgents(cfg *configs.Config, mem *memory.Manager, outages *providers.Breakers, met *metrics.Metrics, procs *exec.Processes, mcp ...tools.Source) ([]*actors.Agent, error) {
	idle := time.Duration(cfg.LLM.IdleTimeoutSeconds) * time.Second
	clients := map[string]providers.Provider{} // behind the endpoint's adaptive limit
	raw := map[string]providers.Provider{}     // the bare clients: the breakers probe them
	for name, pc := range cfg.Providers {
		p, err := newProvider(name, pc, idle)
		if err != nil {
			return nil, err
		}
		// One adaptive limit per endpoint, shared by every model and agent that uses it;
		// llm.maxConcurrent, when set, is its ceiling. Each call to the endpoint is metered.
		metered := p
		if met != nil {
			metered = met.Provider(name, p)
		}
		clients[name] = providers.Adaptive(metered, providers.NewAdaptiveLimiter(providers.AdaptiveConfig{Ceiling: cfg.LLM.MaxConcurrent}))
		raw[name] = p
	}
	registry, err := tools.NewRegistryWith(mcp, newTools(cfg, mem, procs)...)
	if err != nil {
		return nil, err
	}
	if err := agent.InstallBundledSkills(bundledSkillsDir(cfg)); err != nil {
		return nil, fmt.Errorf("bundled skills: %w", err)
	}
	// target is the client chain for one model: the endpoint's limit, prompt-mode tools, retries.
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
		p := client
		if cfg.Model(ref).ToolMode == "prompt" {
			p = providers.PromptTools(p)
		}
		p = providers.Retry(p, providers.RetryConfig{
			MaxRetries:    cfg.LLM.MaxRetries,
			MaxRetryAfter: time.Duration(cfg.LLM.MaxRetryAfterSeconds) * time.Second,
		})
		p = guardOutages(outages, prov, cfg.Providers[prov], p, raw[prov])
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
		deny := ac.Tools.Deny
		if !cfg.MemoryFor(ac).On() {
			deny = append(slices.Clone(deny), "group:memory")
		}
		// Matched by name when a run asks, so it judges tools an MCP server adds later too.
		policy, err := registry.Policy(ac.Tools.Allow, deny)
		if err != nil {
			return nil, fmt.Errorf("agent %s: tools: %w", ac.ID, err)
		}
		if _, err := agent.InitWorkspace(ac.Workspace); err != nil {
			return nil, fmt.Errorf("agent %s: workspace: %w", ac.ID, err)
		}
		mc := cfg.Model(ac.Model)
		fallbacks := targets[1:]
		skills := skillOptions(cfg, ac)
		out = append(out, &actors.Agent{
			ID: ac.ID, Name: ac.Name, Workspace: ac.Workspace, SystemPrompt: ac.SystemPrompt, Skills: &skills, Model: ac.Model,
			Provider: providers.Failover(targets...), Tools: registry, Policy: policy,
			ContextWindow: mc.ContextWindow, MaxTokens: mc.MaxTokens, Vision: cfg.SeesImages(ac.Model), Location: time.Local,
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
					ContextWindow: m.ContextWindow, MaxTokens: m.MaxTokens, Vision: cfg.SeesImages(label)}, nil
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
		GreetOnNew:       s.Greets(),
		GuestModels:      s.GuestModels,
	}
	if s.RateLimit.Messages != nil {
		set.RateLimit.Messages = *s.RateLimit.Messages
	}
	return set
}

// running is a running actor tree and the database under it.
type running struct {
	*actors.Runtime
	store   persistence.Store // *bolt.Store or *postgres.Store (storage.driver)
	memory  *memory.Manager
	outages *providers.Breakers // the model endpoints' circuit breakers
	events  *events.Bus         // the runs' events, for reef events
	metrics *metrics.Metrics    // what /metrics serves (webapi.go)
	webURL  string              // where the web UI listens ("" when off); set before the control socket serves
	stop    func()              // stops the actors, then closes the database
	logs    *logring.Ring       // the gateway's last log lines, for the web UI's Logs page (nil: none)
	procs   *exec.Processes     // exec's background processes, which rebuilt agents' tools share
	mcp     *mcpSet             // the MCP servers the agents' tools come from
	reload  *reloader           // the gateway's config reloads (reload.go); nil for reef chat
	gate    *workGate           // cluster mode: the channels' inbound loops run where their leases are; nil on one node
	cluster *clusterMode        // cluster mode: the node's membership and relay; nil on one node
}

// Cancel stops the current run of a session, on whichever node of a cluster runs it (there,
// Runtime.Cancel writes a cancel entry into the session's inbox: actors/cancel_cluster.go).
func (r *running) Cancel(sessionKey string) { r.Runtime.Cancel(sessionKey) }

// routes is the routing table of the configuration's bindings.
func routes(cfg *configs.Config) *routing.Table {
	bs := make([]routing.Binding, 0, len(cfg.Bindings))
	for _, b := range cfg.Bindings {
		r := routing.Binding{AgentID: b.AgentID, Channel: b.Match.Channel, Account: b.Match.AccountID}
		if p := b.Match.Peer; p != nil {
			r.PeerKind, r.PeerID = p.Kind, p.ID
		}
		bs = append(bs, r)
	}
	return routing.New(bs)
}

// startRuntime opens the store, builds the agents and starts the actor tree with chans. The
// store is opened first, so a second reef on the same data directory fails before it
// touches anything else.
func startRuntime(cfg *configs.Config, log zerolog.Logger, set channelSet) (*running, error) {
	store, err := openStoreSaying(cfg, func(s string) { log.Warn().Msg(s) })
	if err != nil {
		return nil, err
	}
	gate, err := startCluster(cfg, store, set.gate, log) // cluster.go: nil on one node
	if err != nil {
		store.Close()
		return nil, err
	}
	var work actors.WorkGate
	if gate != nil {
		work = gate
	}
	mem := newMemory(cfg, store, log)
	outages := providers.NewBreakers(providers.BreakerConfig{})
	mcpServers, stopFirstMCP, err := startMCP(cfg, log)
	if err != nil {
		store.Close()
		return nil, err
	}
	mcps := &mcpSet{sources: mcpServers, stop: stopFirstMCP} // a reload may replace them (reload_build.go)
	stopMCP := mcps.close
	met := metrics.New()
	procs := exec.NewProcesses(processConfig(cfg))
	agents, err := buildAgents(cfg, mem, outages, met, procs, mcpServers...)
	if err != nil {
		stopMCP()
		store.Close()
		return nil, err
	}
	grants, err := toolGrants(cfg) // knows each MCP server: its grants cover tools it adds later
	if err != nil {
		stopMCP()
		store.Close()
		return nil, err
	}
	for _, note := range cfg.Notes() {
		log.Warn().Msg(note)
	}
	cl, err := newClusterMode(cfg, store, log)
	if err != nil {
		stopMCP()
		store.Close()
		return nil, err
	}
	bus := events.NewBus()
	set.chans = cl.relayChannels(set.chans, bus) // cluster mode: replies and live runs reach the node of the connection (cluster_relay.go)
	rt, err := actors.Start(&actors.Deps{
		Log: log, Store: met.Store(store), Events: bus, Agents: agents, Routes: routes(cfg), Channels: set.chans, Access: set.access, Streaming: set.streaming, Secrets: cfg.Secrets(),
		Session: sessionSettings(cfg), ToolGrants: grants,
		Approvals: approvalSettings(cfg),
		Outages:   outages, OutageWait: time.Duration(cfg.LLM.OutageWaitMinutes) * time.Minute, Processes: procs,
		Media: mediaSettings(cfg), Journals: filepath.Join(cfg.DataDir, "journal"), Work: work,
		Cluster: cl.ownership(),
	}, actors.WithTimer(timerSettings(cfg)))
	if err != nil {
		stopMCP()
		store.Close()
		return nil, err
	}
	met.Watch(bus)
	primed := make(chan struct{})
	go func() { // counts what the store held before; stop waits for it before closing the store
		defer close(primed)
		if err := met.Prime(storedRows(store)); err != nil {
			log.Warn().Err(err).Msg("metrics: counting the stored inbox and outbox")
		}
	}()
	cl.start(rt)
	procs.SetNotify(processNotifier(rt, log))
	procs.SetTracker(processTracker{rt})
	reportStopped(rt, log)
	stop := func() {
		procs.SetNotify(nil) // processes killed at shutdown are not reported
		if err := procs.Close(15 * time.Second); err != nil {
			log.Error().Err(err).Msg("shutdown")
		}
		outages.Close()
		bus.Close() // ends the followers' streams
		if err := rt.Stop(15 * time.Second); err != nil {
			log.Error().Err(err).Msg("shutdown")
		}
		stopMCP() // after the actors: no tool call is running any more
		cl.stop() // after the actors: they write nothing more; hands the partitions over
		<-primed
		mem.Close()
		if err := store.Close(); err != nil {
			log.Error().Err(err).Msg("close database")
		}
	}
	r := &running{Runtime: rt, cluster: cl, store: store, memory: mem, outages: outages, events: bus, metrics: met, stop: stop,
		procs: procs, mcp: mcps}
	r.gate = gate // a reload's new accounts ask the same gate
	return r, nil
}

// settle waits until every message the session accepted was answered and every reply marked
// sent, and reports whether that happened. The terminal knows only that a run ended: a run
// recovered from an earlier exit can end while this session's last line still waits. A run
// ends within runLimit; a reply is marked sent within seconds, else it stays in the outbox
// and settle gives up after sendLimit. Messages waiting for the model to come back do not
// hold it: they are answered when it is back. A run waiting for the owner's approval counts
// as settled: the owner answers it from this very terminal. A value on abort ends the wait at once.
func (r *running) settle(sessionKey string, runLimit, sendLimit time.Duration, abort <-chan os.Signal) bool {
	answeredBy := time.Now().Add(runLimit)
	var sentBy time.Time
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var inbox, outbox int
		var approving, waiting bool
		err := r.store.View(func(rd persistence.Reader) error {
			in, err := rd.Inbox(sessionKey)
			if err != nil {
				return err
			}
			if waiting, err = actors.WaitsForModel(rd, sessionKey); err != nil {
				return err
			}
			out, err := rd.Outbox(sessionKey)
			inbox, outbox = len(in), len(out)
			if err != nil {
				return err
			}
			approving, err = waitsForApproval(rd, sessionKey)
			return err
		})
		now := time.Now()
		switch {
		case err != nil:
			return false
		case inbox == 0 && outbox == 0, waiting && outbox == 0:
			return true
		case approving: // the run waits for the owner, who answers from this very terminal
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

// guardOutages puts p behind the circuit breaker of its provider's endpoint (one per base
// URL, shared by every model there), probed with the client's model list.
func guardOutages(outages *providers.Breakers, name string, pc configs.ProviderConfig, p, client providers.Provider) providers.Provider {
	if outages == nil {
		return p
	}
	probe, _ := client.(providers.Pinger)
	return outages.Guard(name, pc.Type+" "+pc.BaseURL, p, probe)
}

// subagentLimits maps an agent's subagents block.
func subagentLimits(c configs.SubagentsConfig) actors.SubagentLimits {
	c = c.WithDefaults()
	return actors.SubagentLimits{AllowAgents: c.AllowAgents, MaxSpawnDepth: c.MaxSpawnDepth, MaxChildren: c.MaxChildren,
		MaxConcurrent: c.MaxConcurrent, RunTimeout: time.Duration(c.RunTimeoutSeconds) * time.Second,
		ArchiveAfter: time.Duration(c.ArchiveAfterMinutes) * time.Minute}
}
