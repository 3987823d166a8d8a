package configs

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateMCP(t *testing.T) {
	tests := []struct {
		name    string
		servers map[string]MCPServerConfig
		allow   []string
		want    []string // substrings of the error; nil: valid
	}{
		{"stdio", map[string]MCPServerConfig{"files": {Command: "npx", Args: []string{"-y", "x"}}}, []string{"mcp:files"}, nil},
		{"http", map[string]MCPServerConfig{"web_search": {URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}}, nil, nil},
		{"neither", map[string]MCPServerConfig{"a": {}}, nil, []string{"mcp.servers.a: set command"}},
		{"both", map[string]MCPServerConfig{"a": {Command: "x", URL: "http://h/mcp"}}, nil, []string{"mcp.servers.a: set command or url, not both"}},
		{"bad name", map[string]MCPServerConfig{"A__b": {Command: "x"}}, nil, []string{"mcp.servers.A__b: server names use"}},
		{"bad url", map[string]MCPServerConfig{"a": {URL: "ftp://h"}}, nil, []string{`mcp.servers.a.url: "ftp://h" is not an http(s) URL`}},
		{"headers on stdio", map[string]MCPServerConfig{"a": {Command: "x", Headers: map[string]string{"A": "b"}}}, nil, []string{"mcp.servers.a.headers: headers are for url servers"}},
		{"negative timeout", map[string]MCPServerConfig{"a": {Command: "x", TimeoutSeconds: -1}}, nil, []string{"mcp.servers.a.timeoutSeconds"}},
		{"unknown server in a policy", map[string]MCPServerConfig{"a": {Command: "x"}}, []string{"mcp:b"}, []string{`agents[0].tools.allow: "mcp:b" names no server under mcp.servers`}},
		{"unknown server with a pattern", map[string]MCPServerConfig{"a": {Command: "x"}}, []string{"mcp:a:read_*", "mcp:b:*"}, []string{`agents[0].tools.allow: "mcp:b:*" names no server under mcp.servers`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			c.MCP.Servers = tt.servers
			c.Agents[0].Tools.Allow = tt.allow
			ApplyDefaults(&c, envOf(map[string]string{"HOME": "/home/u"}))
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				for _, s := range c.MCP.Servers {
					if s.TimeoutSeconds != DefaultMCPTimeoutSeconds || s.MaxOutputBytes != DefaultMCPMaxOutputBytes {
						t.Errorf("defaults not applied: %+v", s)
					}
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want an error containing %q", err, w)
				}
			}
		})
	}
}

func TestMCPSecrets(t *testing.T) {
	c := validConfig()
	c.MCP.Servers = map[string]MCPServerConfig{
		"gh":  {Command: "x", Env: map[string]string{"GITHUB_TOKEN": "ghp_canary", "DEBUG": "1"}},
		"web": {URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer tok-canary-123", "X-Api-Key": "key-canary", "Accept": "text/plain"}},
	}
	got := c.Secrets()
	for _, want := range []string{"ghp_canary", "Bearer tok-canary-123", "tok-canary-123", "key-canary"} {
		if !slices.Contains(got, want) {
			t.Errorf("Secrets lacks %q: %v", want, got)
		}
	}
	for _, not := range []string{"1", "text/plain"} {
		if slices.Contains(got, not) {
			t.Errorf("Secrets holds %q, which is no secret", not)
		}
	}
	yaml := "mcp:\n  servers:\n    gh:\n      command: x\n      env:\n        GITHUB_TOKEN: ghp_literal\n        DEBUG: \"1\"\n" +
		"    web:\n      url: https://h/mcp\n      headers:\n        Authorization: Bearer ${TOKEN}\n"
	want := []ClearSecret{{Path: "mcp.servers.gh.env.GITHUB_TOKEN", Line: 6}} // "Bearer ${TOKEN}" is fine
	if diff := cmp.Diff(want, ClearSecrets([]byte(yaml))); diff != "" {
		t.Errorf("ClearSecrets (-want +got):\n%s", diff)
	}
}
