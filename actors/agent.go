package actors

import (
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

var hostLine = runtime.GOOS + "/" + runtime.GOARCH

// workspaceTTL bounds how stale the injected workspace files may be in a prompt. Loading them
// for every LLM call would cost several file reads per call under load.
const workspaceTTL = time.Second

// agentCache holds what an Agent derives from its configuration and workspace.
type agentCache struct {
	mu       sync.Mutex
	specs    map[string]toolSpecs // tools.Policy.Key → the specs it offers
	ws       agent.Workspace
	loadedAt time.Time
	gen      int                     // counts workspace loads
	prefix   map[string]stablePrefix // chat type and tool policy key → the prompt's stable prefix
	tools    uint64                  // the registry's Generation the specs and prefixes were built from
}

// toolSpecs are the specs a policy offers, with their estimated tokens.
type toolSpecs struct {
	specs  []messages.ToolSpec
	tokens int
}

// stablePrefix is a cached stable prefix of the system prompt, built from workspace load gen.
type stablePrefix struct {
	gen    int
	text   string
	tokens int
}

// toolSpecs returns the specs of the tools p allows (a run's policy, within the agent's),
// sorted by name: what the model is offered. They are built once per policy.
func (a *Agent) toolSpecs(p tools.Policy) []messages.ToolSpec {
	return a.specsFor(p).specs
}

// toolSpecTokens estimates the tokens of toolSpecs(p) in a request.
func (a *Agent) toolSpecTokens(p tools.Policy) int {
	return a.specsFor(p).tokens
}

func (a *Agent) specsFor(p tools.Policy) toolSpecs {
	key := p.Key()
	c := &a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.Tools != nil { // an MCP server changed its tools: build the lists again
		if g := a.Tools.Generation(); g != c.tools {
			c.specs, c.prefix, c.tools = nil, nil, g
		}
	}
	if ts, ok := c.specs[key]; ok {
		return ts
	}
	var ts toolSpecs
	if a.Tools != nil {
		ts.specs = a.Tools.Specs(p)
	}
	ts.tokens = agent.EstimateToolSpecs(ts.specs)
	if c.specs == nil {
		c.specs = map[string]toolSpecs{}
	}
	c.specs[key] = ts
	return ts
}

// stablePrompt returns the stable prefix of the system prompt for a chat type, a run with the
// owner's standing or not (private: the owner's private files are in it), and the tools
// of policy p, and its estimated tokens. It is rebuilt only after the workspace was reloaded:
// every run of every conversation would otherwise format the same tool list and files again.
func (a *Agent) stablePrompt(chatType string, private bool, p tools.Policy, red redactor) (string, int) {
	ws, gen := a.loadWorkspace()
	specs := a.toolSpecs(p)
	key := chatType + "\x00" + strconv.FormatBool(private) + "\x00" + p.Key()
	c := &a.cache
	c.mu.Lock()
	p0, ok := c.prefix[key]
	tgen := c.tools
	c.mu.Unlock()
	if ok && p0.gen == gen {
		return p0.text, p0.tokens
	}
	// A secret written into a workspace file (TOOLS.md, MEMORY.md) never reaches the model.
	text := red.apply(agent.StablePrompt(agent.PromptInput{AgentName: a.Name, ChatType: chatType,
		Tools: specs, Workspace: ws, Persona: a.SystemPrompt, Private: private}))
	p0 = stablePrefix{gen: gen, text: text, tokens: agent.EstimateTokens(text)}
	c.mu.Lock()
	if c.prefix == nil {
		c.prefix = map[string]stablePrefix{}
	}
	if c.gen == gen && c.tools == tgen {
		c.prefix[key] = p0
	}
	c.mu.Unlock()
	return p0.text, p0.tokens
}

// loadWorkspace returns the workspace files, reloaded at most every workspaceTTL, and the
// number of the load they come from.
func (a *Agent) loadWorkspace() (agent.Workspace, int) {
	c := &a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.loadedAt) < workspaceTTL {
		return c.ws, c.gen
	}
	var ws agent.Workspace
	var err error
	if a.Skills != nil {
		ws, err = agent.LoadWorkspaceWith(a.Workspace, *a.Skills)
	} else {
		ws, err = agent.LoadWorkspace(a.Workspace)
	}
	if err != nil {
		ws = agent.Workspace{Dir: a.Workspace, Warnings: []string{err.Error()}}
	}
	c.ws, c.loadedAt = ws, time.Now()
	c.gen++
	return ws, c.gen
}

// forgetWorkspace makes the next prompt reload the workspace (after a tool changed it).
func (a *Agent) forgetWorkspace() {
	a.cache.mu.Lock()
	a.cache.loadedAt = time.Time{}
	a.cache.mu.Unlock()
}
