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
	specsOnce sync.Once
	specs     []messages.ToolSpec

	mu       sync.Mutex
	ws       agent.Workspace
	loadedAt time.Time
}

// toolSpecs returns the specs of the tools this agent may use (fixed at start).
func (a *Agent) toolSpecs() []messages.ToolSpec {
	a.cache.specsOnce.Do(func() {
		if a.Tools != nil {
			a.cache.specs = a.Tools.Specs(a.Policy)
		}
	})
	return a.cache.specs
}

// workspace returns the agent's workspace files, reloaded at most every workspaceTTL.
func (a *Agent) workspace() agent.Workspace {
	c := &a.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.loadedAt) < workspaceTTL {
		return c.ws
	}
	ws, err := agent.LoadWorkspace(a.Workspace)
	if err != nil {
		ws = agent.Workspace{Dir: a.Workspace, Warnings: []string{err.Error()}}
	}
	c.ws, c.loadedAt = ws, time.Now()
	return ws
}

// forgetWorkspace makes the next prompt reload the workspace (after a tool changed it).
func (a *Agent) forgetWorkspace() {
	a.cache.mu.Lock()
	a.cache.loadedAt = time.Time{}
	a.cache.mu.Unlock()
}
