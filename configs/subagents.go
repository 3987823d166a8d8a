package configs

// SubagentsConfig bounds the sub-agents an agent may spawn (sessions_spawn).
type SubagentsConfig struct {
	// AllowAgents are the agent ids sessions_spawn may name as agentId ("*" = every agent);
	// the agent itself is always allowed. Default: none but itself.
	AllowAgents []string `yaml:"allowAgents"`
	// MaxSpawnDepth is how deep sub-agents may nest: 1 = children may not spawn. Default 1.
	MaxSpawnDepth int `yaml:"maxSpawnDepth"`
	// MaxChildren caps the running children of one session. Default 5.
	MaxChildren int `yaml:"maxChildren"`
	// MaxConcurrent caps the sub-agents running across the gateway; the rest queue. The default
	// agent's value counts. Default 8.
	MaxConcurrent int `yaml:"maxConcurrent"`
	// RunTimeoutSeconds stops a sub-agent's run after this long (timed out); 0 = none (the
	// agent's limits.turnTimeoutSeconds still applies). sessions_spawn may ask for less.
	RunTimeoutSeconds int `yaml:"runTimeoutSeconds"`
	// ArchiveAfterMinutes: a finished child is shown as archived after this long and its
	// session passivates; its transcript is kept. Default 60.
	ArchiveAfterMinutes int `yaml:"archiveAfterMinutes"`
}

// Sub-agent defaults.
const (
	DefaultMaxSpawnDepth       = 1
	DefaultMaxChildren         = 5
	DefaultMaxConcurrentSubs   = 8
	DefaultArchiveAfterMinutes = 60
)

// WithDefaults fills the zero fields with the defaults.
func (s SubagentsConfig) WithDefaults() SubagentsConfig {
	if s.MaxSpawnDepth == 0 {
		s.MaxSpawnDepth = DefaultMaxSpawnDepth
	}
	if s.MaxChildren == 0 {
		s.MaxChildren = DefaultMaxChildren
	}
	if s.MaxConcurrent == 0 {
		s.MaxConcurrent = DefaultMaxConcurrentSubs
	}
	if s.ArchiveAfterMinutes == 0 {
		s.ArchiveAfterMinutes = DefaultArchiveAfterMinutes
	}
	return s
}

// validateSubagents checks one agent's subagents block against the agent ids.
func (c *Config) validateSubagents(v *validator, path string, s SubagentsConfig) {
	path += ".subagents"
	v.nonNegative(path+".maxSpawnDepth", s.MaxSpawnDepth)
	v.nonNegative(path+".maxChildren", s.MaxChildren)
	v.nonNegative(path+".maxConcurrent", s.MaxConcurrent)
	v.nonNegative(path+".runTimeoutSeconds", s.RunTimeoutSeconds)
	v.nonNegative(path+".archiveAfterMinutes", s.ArchiveAfterMinutes)
	if s.MaxSpawnDepth > 5 {
		v.addf("%s.maxSpawnDepth: %d is more than 5: sub-agents nested that deep multiply model calls; use 1 to 5", path, s.MaxSpawnDepth)
	}
	for i, id := range s.AllowAgents {
		if id == "*" {
			continue
		}
		found := false
		for _, a := range c.Agents {
			found = found || a.ID == id
		}
		if !found {
			v.addf("%s.allowAgents[%d]: %q is not the id of a configured agent", path, i, id)
		}
	}
}
