package tools

import (
	"context"
	"fmt"
	"sort"

	"github.com/reefgw/reef/messages"
)

// Registry holds the tools the gateway was built with, by name. It is read-only after
// NewRegistry and safe for concurrent use.
type Registry struct {
	byName map[string]Tool
	names  []string
	live   []Live
}

// NewRegistry builds a registry; a nil tool, a tool without a name or two tools with one name
// are an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]Tool, len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("tools: registry: tool %d is nil", i)
		}
		name := t.Spec().Name
		if name == "" {
			return nil, fmt.Errorf("tools: registry: tool %d (%T) has no name", i, t)
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("tools: registry: two tools are named %q", name)
		}
		r.byName[name] = t
		r.names = append(r.names, name)
		if l, ok := t.(Live); ok {
			r.live = append(r.live, l)
		}
	}
	sort.Strings(r.names)
	return r, nil
}

// Get returns the tool with that name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Names returns every tool name, sorted.
func (r *Registry) Names() []string {
	return append([]string(nil), r.names...)
}

// Specs returns the specs of the tools p allows, sorted by name: what the model is offered.
// A Live tool that is not Offered now is left out.
func (r *Registry) Specs(p Policy) []messages.ToolSpec {
	var specs []messages.ToolSpec
	for _, name := range r.names {
		if !p.Allows(name) {
			continue
		}
		t := r.byName[name]
		if l, ok := t.(Live); ok && !l.Offered() {
			continue
		}
		specs = append(specs, t.Spec())
	}
	return specs
}

// Run runs one call of t and turns a returned error into an error result carrying the
// error's text, so every call yields exactly one Result. Panics are not recovered here:
// the actor that runs the call contains them.
func Run(ctx context.Context, t Tool, call Call) (res Result) {
	res, err := t.Run(ctx, call)
	if err != nil {
		msg := err.Error()
		if msg == "" {
			msg = "tool failed without a message"
		}
		return Result{Content: msg, IsError: true}
	}
	return res
}

// Generation changes whenever the spec of a Live tool, or whether it is offered, changes:
// what Specs returns may then differ.
func (r *Registry) Generation() uint64 {
	var g uint64
	for _, l := range r.live {
		g += l.Generation()
	}
	return g
}
