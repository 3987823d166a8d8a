// Package memory provides the memory tools: memory_search ranks the chunks of the agent's
// notes (MEMORY.md, memory/**/*.md) for a query, by keyword and by meaning; memory_get reads
// lines of one note. Both read only those files, inside the agent's workspace.
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reefgw/reef/memory"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// Indexes finds an agent's memory index. *memory.Manager implements it.
type Indexes interface {
	Index(agentID string) (*memory.Index, bool)
}

// Tools returns memory_search and memory_get over idx (nil: the tools answer that memory
// search is not available).
func Tools(idx Indexes) []tools.Tool {
	return []tools.Tool{&Search{idx: idx}, &Get{}}
}

// Search is memory_search.
type Search struct{ idx Indexes }

var (
	_ tools.Tool       = (*Search)(nil)
	_ tools.Idempotent = (*Search)(nil)
)

// Idempotent: a search changes nothing (its index follows the files).
func (*Search) Idempotent() {}

func (*Search) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "memory_search",
		Description: "Search your long-term memory (MEMORY.md and memory/*.md, and your past conversations where configured) by meaning and by exact words, in any language. " +
			"Use it before answering about prior work, decisions, dates, preferences, people or todos. " +
			"Returns the best chunks with path, line range, score and a snippet; read more with memory_get.",
		Parameters: schema(map[string]any{
			"query":      map[string]any{"type": "string", "description": "what to look for, in the user's words"},
			"maxResults": map[string]any{"type": "integer", "description": fmt.Sprintf("results to return (default %d, at most %d)", memory.DefaultMaxResults, memory.MaxResultsCap)},
			"minScore":   map[string]any{"type": "number", "description": "drop results scoring below this (0..1)"},
		}, "query"),
	}
}

type searchArgs struct {
	Query      string   `json:"query"`
	MaxResults int      `json:"maxResults"`
	MinScore   *float64 `json:"minScore"`
}

func (t *Search) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a searchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	if a.MaxResults < 0 {
		return tools.Result{}, errors.New("maxResults must be 1 or more")
	}
	if a.MinScore != nil && (*a.MinScore < 0 || *a.MinScore > 1) {
		return tools.Result{}, errors.New("minScore must be between 0 and 1")
	}
	var x *memory.Index
	ok := false
	if t.idx != nil {
		x, ok = t.idx.Index(call.Env.AgentID)
	}
	if !ok {
		return tools.Result{}, errors.New("memory search is off for this agent; read MEMORY.md and memory/ with the file tools")
	}
	q := memory.Query{Text: a.Query, MaxResults: a.MaxResults, MinScore: a.MinScore}
	if !call.Env.Reach.Owner { // a guest's run: its own conversation only, no owner's note
		own := memory.SessionPrefix + call.Env.SessionKey
		q.Only = func(p string) bool { return p == own }
	}
	resp, err := x.Search(ctx, q)
	if err != nil {
		if errors.Is(err, memory.ErrEmptyQuery) {
			return tools.Result{}, err
		}
		return tools.Result{}, fmt.Errorf("memory search failed: %v", err)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: string(out)}, nil
}

func schema(props map[string]any, required ...string) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required,
		"additionalProperties": false})
	return raw
}
