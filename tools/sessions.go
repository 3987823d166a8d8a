package tools

import (
	"context"
	"encoding/json"
)

// Sessions is what the session tools (sessions_spawn, sessions_yield, subagents,
// sessions_list, sessions_history, sessions_send; package tools/sessions) act through. The
// actors package implements it on the same value as Runtime: a tool finds it with a type
// assertion on Env.Runtime. args were checked by the tool; the result is the tool's JSON.
type Sessions interface {
	Sessions(ctx context.Context, env Env, tool string, args any) (json.RawMessage, error)
}
