package configs

import (
	"slices"
	"strings"
	"testing"
)

// gateway.http.apiKeys: each key named, long, its own, for agents that exist, with a usable
// prefix; a key is a secret to redact although its field is named "key".
func TestAPIKeys(t *testing.T) {
	const good = "a-long-enough-key-0123"
	for _, tt := range []struct {
		key  APIKeyConfig
		want string // "" = valid
	}{
		{APIKeyConfig{Name: "n8n", Key: good, Agents: []string{"main"}, SessionsPrefix: "n8n."}, ""},
		{APIKeyConfig{Name: "", Key: good, Agents: []string{"main"}}, ".name"},
		{APIKeyConfig{Name: "gateway", Key: good, Agents: []string{"main"}}, "not gateway"},
		{APIKeyConfig{Name: "n8n", Key: "short", Agents: []string{"main"}}, "too short"},
		{APIKeyConfig{Name: "n8n", Key: "the-gateway-token-0123", Agents: []string{"main"}}, "the same as"},
		{APIKeyConfig{Name: "n8n", Key: good}, "list the agents"},
		{APIKeyConfig{Name: "n8n", Key: good, Agents: []string{"nope"}}, `"nope" is not an agent`},
		{APIKeyConfig{Name: "n8n", Key: good, Agents: []string{"main"}, SessionsPrefix: "a:b"}, "sessionsPrefix"},
	} {
		c := &Config{Agents: []AgentConfig{{ID: "main"}}, Gateway: GatewayConfig{HTTP: GatewayHTTPConfig{
			Listen: DefaultHTTPListen, Token: "the-gateway-token-0123", APIKeys: []APIKeyConfig{tt.key}}}}
		var v validator
		c.validateGateway(&v)
		var msgs []string
		for _, p := range v.problems {
			msgs = append(msgs, p.Error())
		}
		got := strings.Join(msgs, "\n")
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%+v: got %q, want %q", tt.key, got, tt.want)
		}
		if tt.want == "" && !slices.Contains(c.Secrets(), good) {
			t.Errorf("the key is not among the secrets to redact: %v", c.Secrets())
		}
	}
}
