package tools

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/reefgw/reef/messages"
)

// Source offers tools that may appear while reef runs: an MCP server's, which it lists when
// it connects and again when it announces a change.
type Source interface {
	// Name is the source's name; its tools are named Name + MCPSeparator + something.
	Name() string
	// Tools returns every tool the source has offered so far, the same Tool for a name each
	// time. One it no longer offers is a Live tool whose Offered reports false.
	Tools() []Tool
	// Generation grows whenever Tools, or a tool's spec, may have changed.
	Generation() uint64
}

// Registry holds the tools the gateway was built with, by name, and the tools its Sources
// offer now. Safe for concurrent use.
type Registry struct {
	byName  map[string]Tool
	names   []string
	live    []Live
	sources []Source

	mu       sync.Mutex
	cached   bool
	cacheGen uint64          // the sources' generation the view was built from
	view     map[string]Tool // byName and the sources' tools
	viewList []string        // sorted
}

// NewRegistry builds a registry of fixed tools; a nil tool, a tool without a name or two
// tools with one name are an error.
func NewRegistry(tools ...Tool) (*Registry, error) {
	return NewRegistryWith(nil, tools...)
}

// NewRegistryWith builds a registry of fixed tools and of the tools sources offer, now and
// later. A source's tool named like a fixed one, or another source's, is left out.
func NewRegistryWith(sources []Source, tools ...Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]Tool, len(tools)), sources: slices.Clone(sources)}
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

// current returns every tool by name and the sorted names, the sources' as they are now.
func (r *Registry) current() (map[string]Tool, []string) {
	if len(r.sources) == 0 {
		return r.byName, r.names
	}
	// The generation is read before the tools: a change in between makes the next call
	// rebuild the view, never keep a stale one.
	var gen uint64
	for _, s := range r.sources {
		gen += s.Generation()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cached && r.cacheGen == gen {
		return r.view, r.viewList
	}
	view := make(map[string]Tool, len(r.byName))
	for n, t := range r.byName {
		view[n] = t
	}
	list := slices.Clone(r.names)
	for _, s := range r.sources {
		for _, t := range s.Tools() {
			name := t.Spec().Name
			if _, dup := view[name]; dup || name == "" {
				continue
			}
			view[name] = t
			list = append(list, name)
		}
	}
	sort.Strings(list)
	r.view, r.viewList, r.cacheGen, r.cached = view, list, gen, true
	return view, list
}

// Get returns the tool with that name.
func (r *Registry) Get(name string) (Tool, bool) {
	byName, _ := r.current()
	t, ok := byName[name]
	return t, ok
}

// Has reports whether a tool has that name.
func (r *Registry) Has(name string) bool {
	_, ok := r.Get(name)
	return ok
}

// Names returns every tool name, sorted.
func (r *Registry) Names() []string {
	_, names := r.current()
	return slices.Clone(names)
}

// Servers names the registry's sources: MCP servers, including those without tools yet.
func (r *Registry) Servers() []string {
	out := make([]string, 0, len(r.sources))
	for _, s := range r.sources {
		out = append(out, s.Name())
	}
	return out
}

// Policy checks allow and deny lists as NewPolicy does, against the registry's tools and its
// sources (an MCP server's tool name counts as known when its server is), and returns the
// policy judged over the registry as it is when asked: tools a source adds later are allowed
// or not by the same entries.
func (r *Registry) Policy(allow, deny []string) (Policy, error) {
	return newPolicy(allow, deny, r, r.Servers())
}

// Specs returns the specs of the tools p allows, sorted by name: what the model is offered.
// A Live tool that is not Offered now is left out.
func (r *Registry) Specs(p Policy) []messages.ToolSpec {
	byName, names := r.current()
	var specs []messages.ToolSpec
	for _, name := range names {
		if !p.Allows(name) {
			continue
		}
		t := byName[name]
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

// Generation changes whenever the spec of a Live tool, whether it is offered, or the tools a
// Source offers change: what Specs returns may then differ.
func (r *Registry) Generation() uint64 {
	var g uint64
	for _, l := range r.live {
		g += l.Generation()
	}
	for _, s := range r.sources {
		g += s.Generation()
	}
	return g
}
