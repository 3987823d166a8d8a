package actors

import (
	"runtime"
	"sync"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
)

var hostLine = runtime.GOOS + "/" + runtime.GOARCH

// workspaceTTL bounds how stale the injected workspace files may be in a prompt. Loading them
// for every LLM call would cost several file reads per call under load.
const workspaceTTL = time.Second

// agentCache holds what an Agent derives from its configuration and workspace.
type agentCache struct {
	specsOnce  sync.Once
	specs      []messages.ToolSpec
	specTokens int

	mu       sync.Mutex
	ws       agent.Workspace
	loadedAt time.Time
	gen      int                     // counts workspace loads
	prefix   map[string]stablePrefix // chat type → the prompt's stable prefix
}

// stablePrefix is a cached stable prefix of the system prompt, built from workspace load gen.
type stablePrefix struct {
	gen    int
	text   string
	tokens int
}

// toolSpecs returns the specs of the tools this agent may use (fixed at start).
func (a *Agent) toolSpecs() []messages.ToolSpec {
	a.cache.specsOnce.Do(func() {
		if a.Tools != nil {
			a.cache.specs = a.Tools.Specs(a.Policy)
		}
		a.cache.specTokens = agent.EstimateToolSpecs(a.cache.specs)
	})
	return a.cache.specs
}

// toolSpecTokens estimates the tokens of toolSpecs in a request.
func (a *Agent) toolSpecTokens() int {
	a.toolSpecs()
	return a.cache.specTokens
}

// stablePrompt returns the stable prefix of the system prompt for a chat type, and its
// estimated tokens. It is rebuilt only after the workspace was reloaded: every run of every
// conversation would otherwise format the same tool list and files again.
func (a *Agent) stablePrompt(chatType string) (string, int) {
	ws, gen := a.loadWorkspace()
	c := &a.cache
	c.mu.Lock()
	p, ok := c.prefix[chatType]
	c.mu.Unlock()
	if ok && p.gen == gen {
		return p.text, p.tokens
	}
	text := agent.StablePrompt(agent.PromptInput{AgentName: a.Name, ChatType: chatType,
		Tools: a.toolSpecs(), Workspace: ws})
	p = stablePrefix{gen: gen, text: text, tokens: agent.EstimateTokens(text)}
	c.mu.Lock()
	if c.prefix == nil {
		c.prefix = map[string]stablePrefix{}
	}
	if c.gen == gen {
		c.prefix[chatType] = p
	}
	c.mu.Unlock()
	return p.text, p.tokens
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
	ws, err := agent.LoadWorkspace(a.Workspace)
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
