package configs

import (
	"fmt"
	"regexp"
	"slices"
)

// APIKeyConfig is a key of the OpenAI-compatible API (gateway.http.apiKeys): whoever presents
// it reaches the listed agents, and only the sessions whose names start with SessionsPrefix
// (default "<name>.").
type APIKeyConfig struct {
	Name           string   `yaml:"name"`
	Key            string   `yaml:"key"`
	Agents         []string `yaml:"agents"`
	SessionsPrefix string   `yaml:"sessionsPrefix"`
}

var (
	apiKeyName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	sessionsPrefix = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$`)
)

func (c *Config) validateAPIKeys(v *validator) {
	names, keys := map[string]bool{}, map[string]bool{}
	for i, k := range c.Gateway.HTTP.APIKeys {
		path := fmt.Sprintf("gateway.http.apiKeys[%d]", i)
		switch {
		case !apiKeyName.MatchString(k.Name) || k.Name == "gateway":
			v.addf("%s.name: %q: give each key a name of letters, digits, _ and - (not gateway); /metrics counts requests by it", path, k.Name)
		case names[k.Name]:
			v.addf("%s.name: %q is used twice", path, k.Name)
		}
		names[k.Name] = true
		switch {
		case len(k.Key) < 16:
			v.addf("%s.key: too short (%d characters): use at least 16 random characters, from the environment (${REEF_..._KEY})", path, len(k.Key))
		case keys[k.Key] || k.Key == c.Gateway.HTTP.Token:
			v.addf("%s.key: the same as another key or the gateway token: each key must be its own", path)
		}
		keys[k.Key] = true
		if len(k.Agents) == 0 {
			v.addf("%s.agents: list the agents the key reaches", path)
		}
		for _, id := range k.Agents {
			if !slices.ContainsFunc(c.Agents, func(a AgentConfig) bool { return a.ID == id }) {
				v.addf("%s.agents: %q is not an agent of agents[]", path, id)
			}
		}
		if k.SessionsPrefix != "" && !sessionsPrefix.MatchString(k.SessionsPrefix) {
			v.addf("%s.sessionsPrefix: %q: 1 to 64 letters, digits and . _ @ + - (starting with a letter or digit)", path, k.SessionsPrefix)
		}
	}
}
