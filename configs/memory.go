package configs

import (
	"maps"
	"slices"
)

// MemoryConfig configures memory search (the memory_search and memory_get tools) globally
// under `memory:`; `agents[].memory` overrides it key by key.
type MemoryConfig struct {
	Enabled *bool `yaml:"enabled"` // default true: the tools are offered and the notes indexed
	// Provider of embeddings: auto (default: the agent's provider when it serves embeddings,
	// openai or gemini; else keyword search only), openai, gemini, or none (keyword only).
	Provider string `yaml:"provider"`
	// Model is the embedding model; default text-embedding-3-small (openai), gemini-embedding-001 (gemini).
	Model string `yaml:"model"`
	// BaseURL overrides the provider's endpoint for embeddings (a local Ollama, vLLM or llama.cpp server).
	BaseURL string `yaml:"baseUrl"`
	// Sources to index: memory (MEMORY.md and memory/**/*.md, always) and, when listed,
	// sessions (the agent's own past conversations: what the people and the agent said).
	Sources       []string `yaml:"sources"`
	ChunkTokens   int      `yaml:"chunkTokens"`   // tokens per chunk, default 400
	OverlapTokens int      `yaml:"overlapTokens"` // tokens a chunk repeats of the previous one, default 80
}

// Default embedding models per provider type.
const (
	DefaultOpenAIEmbeddingModel = "text-embedding-3-small"
	DefaultGeminiEmbeddingModel = "gemini-embedding-001"
)

var memoryProviders = []string{"", "auto", "openai", "gemini", "none"}

// Sessions reports whether the agent's past conversations are indexed (sources lists sessions).
func (m MemoryConfig) Sessions() bool { return slices.Contains(m.Sources, "sessions") }

// On reports whether memory search is enabled (default true).
func (m MemoryConfig) On() bool { return m.Enabled == nil || *m.Enabled }

// MemoryFor returns the memory settings of agent a: the global block with the agent's keys
// over it.
func (c *Config) MemoryFor(a AgentConfig) MemoryConfig {
	m, o := c.Memory, a.Memory
	if o.Enabled != nil {
		m.Enabled = o.Enabled
	}
	if o.Provider != "" {
		m.Provider = o.Provider
	}
	if o.Model != "" {
		m.Model = o.Model
	}
	if o.BaseURL != "" {
		m.BaseURL = o.BaseURL
	}
	if o.Sources != nil {
		m.Sources = o.Sources
	}
	if o.ChunkTokens != 0 {
		m.ChunkTokens = o.ChunkTokens
	}
	if o.OverlapTokens != 0 {
		m.OverlapTokens = o.OverlapTokens
	}
	return m
}

// EmbeddingProvider resolves which configured provider serves agent a's embeddings: its name
// in Providers, its type (openai or gemini) and the model; name "" means keyword search only.
func (c *Config) EmbeddingProvider(a AgentConfig) (name, typ, model string) {
	m := c.MemoryFor(a)
	switch m.Provider {
	case "none":
		return "", "", ""
	case "", "auto":
		prov, _, err := SplitModel(a.Model)
		if err != nil {
			return "", "", ""
		}
		pc, ok := c.Providers[prov]
		if !ok || !servesEmbeddings(providerType(prov, pc)) {
			return "", "", ""
		}
		name, typ = prov, providerType(prov, pc)
	default:
		typ = m.Provider
		if pc, ok := c.Providers[typ]; ok && providerType(typ, pc) == typ {
			name = typ
		} else {
			for _, n := range slices.Sorted(maps.Keys(c.Providers)) {
				if providerType(n, c.Providers[n]) == typ {
					name = n
					break
				}
			}
		}
		if name == "" && m.BaseURL == "" {
			return "", "", ""
		}
		if name == "" {
			name = typ // a local server named by baseUrl alone, without a key
		}
	}
	model = m.Model
	if model == "" {
		model = DefaultOpenAIEmbeddingModel
		if typ == "gemini" {
			model = DefaultGeminiEmbeddingModel
		}
	}
	return name, typ, model
}

func servesEmbeddings(typ string) bool { return typ == "openai" || typ == "gemini" }

func providerType(name string, pc ProviderConfig) string {
	if pc.Type != "" {
		return pc.Type
	}
	return name
}

// memory checks one memory block at path ("memory", "agents[0].memory").
func (v *validator) memory(path string, m MemoryConfig) {
	v.oneOf(path+".provider", m.Provider, memoryProviders)
	for i, s := range m.Sources {
		switch s {
		case "memory", "sessions":
		default:
			v.addf("%s.sources[%d]: %q is not a source: use memory, or memory and sessions", path, i, s)
		}
	}
	v.nonNegative(path+".chunkTokens", m.ChunkTokens)
	v.nonNegative(path+".overlapTokens", m.OverlapTokens)
	if m.ChunkTokens > 0 && m.ChunkTokens < 32 {
		v.addf("%s.chunkTokens: %d is too small: use at least 32 (default 400)", path, m.ChunkTokens)
	}
	if c, o := m.ChunkTokens, m.OverlapTokens; c > 0 && o >= c {
		v.addf("%s.overlapTokens: %d is not below chunkTokens (%d)", path, o, c)
	}
	if m.ChunkTokens == 0 && m.OverlapTokens >= 400 {
		v.addf("%s.overlapTokens: %d is not below the default chunkTokens (400)", path, m.OverlapTokens)
	}
	if len(m.Sources) > 0 && !slices.Contains(m.Sources, "memory") {
		v.addf("%s.sources: %v leaves out the notes: use [memory] or [memory, sessions]", path, m.Sources)
	}
}
