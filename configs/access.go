package configs

import (
	_ "embed"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Example is reef.example.yaml: every key documented, secrets as ${ENV}. `reef init` writes it.
//
//go:embed reef.example.yaml
var Example []byte

// Agent returns the agent with the given id; "" means the default (first) agent.
func (c *Config) Agent(id string) (AgentConfig, bool) {
	if id == "" && len(c.Agents) > 0 {
		return c.Agents[0], true
	}
	for _, a := range c.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return AgentConfig{}, false
}

// knownContextWindows maps model name prefixes to their context window in tokens.
// The longest matching prefix wins.
var knownContextWindows = map[string]int{
	"gpt-4.1":    1047576,
	"gpt-4o":     128000,
	"gpt-5":      400000,
	"o3":         200000,
	"o4":         200000,
	"claude":     200000,
	"gemini-2":   1048576,
	"gemini-1.5": 1048576,
	"deepseek":   128000,
	"qwen":       131072,
	"llama3":     131072,
	"llama3.1":   131072,
}

// Model returns the settings of the model ref ("provider/model") with defaults filled:
// ToolMode native, ContextWindow from a table of known models, else 128000.
func (c *Config) Model(ref string) ModelConfig {
	m := c.Models[ref]
	if m.ToolMode == "" {
		m.ToolMode = DefaultToolMode
	}
	if m.ContextWindow == 0 {
		m.ContextWindow = DefaultContextWindow
		_, name, _ := SplitModel(ref)
		best := 0
		for prefix, n := range knownContextWindows {
			if strings.HasPrefix(name, prefix) && len(prefix) > best {
				m.ContextWindow, best = n, len(prefix)
			}
		}
	}
	return m
}

// SplitModel splits "provider/model" at the first '/': "openrouter/meta/llama-3" is provider
// openrouter, model meta/llama-3.
func SplitModel(ref string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(ref, "/")
	if !ok || provider == "" || model == "" || strings.ContainsAny(ref, " \t\n") {
		return "", "", fmt.Errorf("%q is not a model reference: write provider/model, e.g. openai/gpt-4.1-mini", ref)
	}
	return provider, model, nil
}

// secretKeyWords mark a yaml key as holding a secret (apiKey, botToken, appSecret...).
var secretKeyWords = []string{"apikey", "token", "secret", "password", "encryptkey"}

// Secrets returns every non-empty secret in c (API keys, tokens, passwords), sorted and
// without duplicates, for log redaction and for stripping from child environments.
// A string field is a secret when its yaml key contains apiKey, token, secret, password
// or encryptKey, so channels added later are covered without changing this function.
func (c *Config) Secrets() []string {
	set := map[string]bool{}
	collectSecrets(reflect.ValueOf(c).Elem(), false, set)
	for _, v := range c.MCP.secrets() {
		set[v] = true
	}
	for _, v := range c.Storage.secrets() {
		set[v] = true
	}
	for _, k := range c.Gateway.HTTP.APIKeys { // its field is "key": not a secret's name
		if k.Key != "" {
			set[k.Key] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func collectSecrets(v reflect.Value, secret bool, set map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectSecrets(v.Elem(), secret, set)
		}
	case reflect.String:
		if secret && v.String() != "" {
			set[v.String()] = true
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			name := strings.ToLower(yamlName(v.Type().Field(i)))
			if name == "" {
				continue
			}
			collectSecrets(v.Field(i), isSecretKey(name), set)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			collectSecrets(it.Value(), secret, set)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			collectSecrets(v.Index(i), secret, set)
		}
	}
}
