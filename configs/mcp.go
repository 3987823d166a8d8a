package configs

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Defaults of an MCP server's block.
const (
	DefaultMCPTimeoutSeconds = 60
	DefaultMCPMaxOutputBytes = 65536
)

// MCPConfig is the mcp block: the MCP servers whose tools agents may use.
type MCPConfig struct {
	Servers map[string]MCPServerConfig `yaml:"servers"` // by name; the tools are offered as <name>__<tool>
}

// MCPServerConfig is one MCP server: command (stdio) or url (streamable HTTP).
type MCPServerConfig struct {
	Command string            `yaml:"command"` // stdio: the program reef starts, e.g. npx
	Args    []string          `yaml:"args"`    // its arguments
	Env     map[string]string `yaml:"env"`     // added to its environment; put secrets here as ${VAR}
	Cwd     string            `yaml:"cwd"`     // its working directory; default reef's
	URL     string            `yaml:"url"`     // streamable HTTP: the server's endpoint
	Headers map[string]string `yaml:"headers"` // sent with every request, e.g. Authorization: Bearer ${TOKEN}
	// TimeoutSeconds bounds one tool call (default 60); a call past it is cancelled and fails.
	TimeoutSeconds int `yaml:"timeoutSeconds"`
	MaxOutputBytes int `yaml:"maxOutputBytes"` // text of one result kept for the model; default 65536
}

// mcpName is what a server name may be: it starts every tool name of the server.
var mcpName = regexp.MustCompile(`^[a-z0-9-]+(_[a-z0-9-]+)*$`)

func (m *MCPConfig) applyDefaults() {
	for name, s := range m.Servers {
		positive(&s.TimeoutSeconds, DefaultMCPTimeoutSeconds)
		positive(&s.MaxOutputBytes, DefaultMCPMaxOutputBytes)
		m.Servers[name] = s
	}
}

func (c *Config) validateMCP(v *validator) {
	for _, name := range slices.Sorted(maps.Keys(c.MCP.Servers)) {
		s, path := c.MCP.Servers[name], joinMapKey("mcp.servers", name)
		if !mcpName.MatchString(name) || len(name) > 32 {
			v.addf("%s: server names use a-z, 0-9, '-' and single '_' (its tools are named <server>__<tool>), at most 32 characters", path)
		}
		switch {
		case s.Command == "" && s.URL == "":
			v.addf("%s: set command (a program reef starts, speaking MCP on stdin/stdout) or url (a streamable HTTP endpoint)", path)
		case s.Command != "" && s.URL != "":
			v.addf("%s: set command or url, not both", path)
		case s.URL != "":
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.addf("%s.url: %q is not an http(s) URL", path, s.URL)
			}
			if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
				v.addf("%s: args, env and cwd are for command servers; a url server takes headers", path)
			}
		default:
			if len(s.Headers) > 0 {
				v.addf("%s.headers: headers are for url servers; give a command server its secrets in env", path)
			}
		}
		v.nonNegative(path+".timeoutSeconds", s.TimeoutSeconds)
		v.nonNegative(path+".maxOutputBytes", s.MaxOutputBytes)
	}
	for i, a := range c.Agents {
		for list, entries := range map[string][]string{"allow": a.Tools.Allow, "deny": a.Tools.Deny} {
			for _, e := range entries {
				if name, ok := strings.CutPrefix(e, "mcp:"); ok {
					name, _, _ = strings.Cut(name, ":") // mcp:<server>:<pattern>
					if _, known := c.MCP.Servers[name]; !known {
						v.addf("agents[%d].tools.%s: %q names no server under mcp.servers", i, list, e)
					}
				}
			}
		}
	}
}

// secrets are the values of an MCP server's env and headers whose names say they hold a
// credential (..._TOKEN, API_KEY, Authorization...): Secrets adds them to what reef redacts.
func (m MCPConfig) secrets() []string {
	var out []string
	for _, s := range m.Servers {
		for k, val := range s.Env {
			if secretName(k) && val != "" {
				out = append(out, val)
			}
		}
		for k, val := range s.Headers {
			if secretName(k) && val != "" {
				out = append(out, val)
				if _, tok, ok := strings.Cut(val, " "); ok && len(tok) >= 8 { // "Bearer <token>"
					out = append(out, tok)
				}
			}
		}
	}
	return out
}

// secretName reports whether the name of an environment variable or an HTTP header says it
// holds a credential: API_KEY, GITHUB_TOKEN, X-Api-Key, Authorization.
func secretName(name string) bool {
	n := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(name))
	return n == "authorization" || isSecretKey(n)
}

// String names a server's transport for logs: its command or URL, never env or headers.
func (s MCPServerConfig) String() string {
	if s.URL != "" {
		return fmt.Sprintf("url %s", s.URL)
	}
	return fmt.Sprintf("command %s", s.Command)
}
