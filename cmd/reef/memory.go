package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
	"github.com/reefgw/reef/memory"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/providers"
)

const memoryUsage = `usage:
  reef memory status [-agent ID] [-json]          files, chunks, vectors, provider, model, last index, size
  reef memory index [-agent ID] [--force] [-json] index the notes now (--force: drop the index, rebuild)
  reef memory search QUERY [-agent ID] [-json]    search the notes as memory_search does
Through the running gateway when one runs, else on the database. -agent defaults to the first agent.`

// newMemory builds the memory index of every agent with memory on, over store.
func newMemory(cfg *configs.Config, store persistence.Store, log zerolog.Logger) *memory.Manager {
	retry := providers.RetryConfig{MaxRetries: cfg.LLM.MaxRetries,
		MaxRetryAfter: time.Duration(cfg.LLM.MaxRetryAfterSeconds) * time.Second}
	var agents []memory.Config
	for _, ac := range cfg.Agents {
		m := cfg.MemoryFor(ac)
		if !m.On() {
			continue
		}
		mc := memory.Config{AgentID: ac.ID, Workspace: ac.Workspace, ChunkTokens: m.ChunkTokens, OverlapTokens: m.OverlapTokens,
			Sessions: m.Sessions(), Shared: cfg.Cluster.Enabled} // a cluster shares the workspace: notes written through another node
		if name, typ, model := cfg.EmbeddingProvider(ac); name != "" {
			if e := newEmbedder(name, typ, cfg.Providers[name], m.BaseURL, retry); e != nil {
				mc.Embedder, mc.Provider, mc.Model = e, typ, model
			}
		}
		agents = append(agents, mc)
	}
	return memory.NewManager(store, log, agents...)
}

// runMemory shows, rebuilds and searches the agents' memory indexes.
func runMemory(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("memory", stderr)
	agentID := flags.String("agent", "", "agent id (default: the first agent)")
	asJSON := flags.Bool("json", false, "print JSON")
	force := flags.Bool("force", false, "index: drop the index and rebuild it")
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(stdout, memoryUsage)
		return 0
	}
	action := args[0]
	flagArgs, words := splitMemoryArgs(args[1:])
	if code, ok := parseFlags(flags, flagArgs, stdout); !ok {
		return code
	}
	query := strings.Join(append(words, flags.Args()...), " ")
	switch {
	case action != "status" && action != "index" && action != "search":
		fmt.Fprintf(stderr, "reef memory: unknown action %q\n%s\n", action, memoryUsage)
		return 2
	case action == "search" && strings.TrimSpace(query) == "":
		fmt.Fprintf(stderr, "reef memory search: give a query\n%s\n", memoryUsage)
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	if *agentID == "" {
		*agentID = cfg.Agents[0].ID
	}
	out, err := memoryCall(cfg, action, url.Values{"agent": {*agentID}, "q": {query}, "force": {fmt.Sprint(*force)}})
	if err != nil {
		fmt.Fprintf(stderr, "reef memory %s: %v\n", action, err)
		return 1
	}
	if *asJSON {
		fmt.Fprintf(stdout, "%s\n", out)
		return 0
	}
	return printMemory(stdout, action, out)
}

// splitMemoryArgs takes the flags out of args wherever they are (reef memory search Rust
// -json), leaving the words of the query.
func splitMemoryArgs(args []string) (flagArgs, words []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			words = append(words, a)
		case (name == "agent" || name == "config") && !hasValue && i+1 < len(args):
			flagArgs = append(flagArgs, a, args[i+1])
			i++
		default:
			flagArgs = append(flagArgs, a)
		}
	}
	return flagArgs, words
}

// memoryCall runs an action through the running gateway, or on the database when none runs.
func memoryCall(cfg *configs.Config, action string, q url.Values) (json.RawMessage, error) {
	if c := dialControl(cfg); c != nil {
		return c.memory(action, q)
	}
	store, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	mem := newMemory(cfg, store, zerolog.Nop())
	defer mem.Close()
	return memoryAction(context.Background(), mem, action, q)
}

// memoryAction is one action on an agent's index; its answer is JSON.
func memoryAction(ctx context.Context, m *memory.Manager, action string, q url.Values) (json.RawMessage, error) {
	x, ok := m.Index(q.Get("agent"))
	if !ok {
		return nil, fmt.Errorf("agent %q has no memory index (no such agent, or memory.enabled is false)", q.Get("agent"))
	}
	var v any
	var err error
	switch action {
	case "status":
		v, err = x.Status(ctx)
	case "index":
		if q.Get("force") == "true" {
			err = x.Rebuild(ctx)
		}
		if err == nil {
			v, err = x.Status(ctx)
		}
	case "search":
		v, err = x.Search(ctx, memory.Query{Text: q.Get("q")})
	default:
		err = fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func (c *controlClient) memory(action string, q url.Values) (json.RawMessage, error) {
	resp, err := c.http.PostForm("http://reef/memory/"+action, q)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(strings.TrimSpace(string(b)))
	}
	return b, nil
}

// serveMemory is the control socket's memory route: POST /memory/{action} with agent, q, force.
func serveMemory(m *memory.Manager) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Minute)
		defer cancel()
		r.ParseForm()
		out, err := memoryAction(ctx, m, r.PathValue("action"), r.Form)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}
}

// printMemory prints an action's JSON answer for people.
func printMemory(w io.Writer, action string, out json.RawMessage) int {
	if action == "search" {
		var r memory.Response
		if err := json.Unmarshal(out, &r); err != nil {
			fmt.Fprintf(w, "%s\n", out)
			return 0
		}
		fmt.Fprintf(w, "mode %s, provider %s %s, %d result(s)\n", r.Mode, r.Provider, r.Model, len(r.Results))
		if r.Warning != "" {
			fmt.Fprintf(w, "note: %s\n", r.Warning)
		}
		for _, res := range r.Results {
			fmt.Fprintf(w, "\n%.3f  %s\n", res.Score, termtext.Line(res.Citation))
			for _, l := range strings.Split(res.Snippet, "\n") {
				fmt.Fprintf(w, "    %s\n", termtext.Line(l))
			}
		}
		return 0
	}
	var st memory.Stats
	if err := json.Unmarshal(out, &st); err != nil {
		fmt.Fprintf(w, "%s\n", out)
		return 0
	}
	model := st.Model
	if model == "" {
		model = "(keyword search only)"
	}
	fmt.Fprintf(w, "agent:      %s\nfiles:      %d (%d skipped)\nchunks:     %d\nvectors:    %d\nprovider:   %s %s\n",
		st.Agent, st.Files, st.Skipped, st.Chunks, st.Vectors, st.Provider, model)
	if st.Sessions > 0 {
		fmt.Fprintf(w, "sessions:   %d conversation(s)\n", st.Sessions)
	}
	if !st.LastSync.IsZero() {
		fmt.Fprintf(w, "last index: %s\n", st.LastSync.Local().Format(time.DateTime))
	}
	fmt.Fprintf(w, "size:       %.1f KB\n", float64(st.Bytes)/1024)
	fmt.Fprintf(w, "changes:    %s\n", st.Watching)
	if st.EmbedError != "" {
		fmt.Fprintf(w, "embeddings: failing: %s\n", st.EmbedError)
	}
	return 0
}
