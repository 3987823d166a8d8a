package configs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envOf returns an env function reading m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"KEY": "sk-123", "HOST": "example.com", "EMPTY": ""})
	tests := []struct {
		name, in, want string
		unset          []string
	}{
		{"set", "apiKey: ${KEY}", "apiKey: sk-123", nil},
		{"unset", "apiKey: ${NOPE}", "apiKey: ", []string{"NOPE"}},
		{"empty counts as unset", "a: ${EMPTY}", "a: ", []string{"EMPTY"}},
		{"default used", "u: ${NOPE:-http://localhost:1/v1}", "u: http://localhost:1/v1", nil},
		{"default ignored when set", "u: ${HOST:-other}", "u: example.com", nil},
		{"empty default", "a: ${NOPE:-}", "a: ", nil},
		{"nested default", "u: https://${NOPE:-${HOST}}/v1", "u: https://example.com/v1", nil},
		{"nested unset", "u: ${A:-${B}}", "u: ", []string{"B"}},
		{"dollar dollar", "p: $${KEY} costs $$5", "p: ${KEY} costs $5", nil},
		{"lone dollar kept", "p: $KEY and $ and a$", "p: $KEY and $ and a$", nil},
		{"unterminated kept", "p: ${KEY", "p: ${KEY", nil},
		{"invalid name kept", "p: ${1X} ${A-B}", "p: ${1X} ${A-B}", nil},
		{"several", "${KEY}/${HOST}/${NOPE}", "sk-123/example.com/", []string{"NOPE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := expand(tt.in, env)
			if got.text != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.in, got.text, tt.want)
			}
			if diff := cmp.Diff(tt.unset, got.unset); diff != "" {
				t.Errorf("unset (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"id", "name", "model", "fallbacks", "workspace", "tools", "limits"}
	tests := []struct{ key, want string }{
		{"modle", "model"},
		{"Model", "model"},
		{"fallback", "fallbacks"},
		{"work_space", "workspace"},
		{"tool", "tools"},
		{"temperature", ""},
		{"ix", "id"},
	}
	for _, tt := range tests {
		if got := suggest(tt.key, known); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if got := suggest("api_key", []string{"type", "baseUrl", "apiKey"}); got != "apiKey" {
		t.Errorf("suggest(api_key) = %q, want apiKey", got)
	}
}
