package configs

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// schemaKeys returns every yaml key of t and the types below it, as dotted paths
// ("agents.limits.maxToolCalls"); map and slice elements add no path element. A type inside
// itself (channels.telegram.accounts.<name> is a telegram block) is walked once.
func schemaKeys(t reflect.Type, prefix string, out map[string]string, outer ...reflect.Type) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		schemaKeys(t.Elem(), prefix, out, outer...)
	case reflect.Struct:
		if slices.Contains(outer, t) {
			return
		}
		outer = append(outer, t)
		for i := 0; i < t.NumField(); i++ {
			name := yamlName(t.Field(i))
			if name == "" {
				continue
			}
			path := joinPath(prefix, name)
			out[path] = name
			schemaKeys(t.Field(i).Type, path, out, outer...)
		}
	}
}

func TestExampleDocumentsEveryKey(t *testing.T) {
	keys := map[string]string{}
	schemaKeys(reflect.TypeOf(Config{}), "", keys)
	if len(keys) < 30 {
		t.Fatalf("found only %d schema keys; the reflection walk is broken", len(keys))
	}
	lines := strings.Split(string(Example), "\n")
	var paths []string
	for p := range keys {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		key := keys[path]
		// The key, active or commented out, as a mapping key or the first key of a list item.
		re := regexp.MustCompile(`^\s*(#\s*)?(-\s+)?` + regexp.QuoteMeta(key) + `:`)
		found, documented := false, false
		for i, line := range lines {
			loc := re.FindStringIndex(line)
			if loc == nil {
				continue
			}
			found = true
			rest := line[loc[1]:]
			if strings.Contains(rest, " # ") || (i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#")) {
				documented = true
			}
		}
		switch {
		case !found:
			t.Errorf("reef.example.yaml lacks key %s", path)
		case !documented:
			t.Errorf("reef.example.yaml has key %s without a comment on its line or the line before", path)
		}
	}
}

func TestExampleEmbedded(t *testing.T) {
	disk, err := os.ReadFile("reef.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(disk, Example) {
		t.Error("Example differs from reef.example.yaml")
	}
}

func TestExampleLoads(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		model  string
		noProv bool
	}{
		{"openai key", map[string]string{"OPENAI_API_KEY": "sk-test"}, "openai/gpt-4.1-mini", false},
		{"anthropic key", map[string]string{"ANTHROPIC_API_KEY": "sk-ant"}, "anthropic/claude-sonnet-4-5", false},
		{"ollama", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "REEF_MODEL": "openai/llama3.1"}, "openai/llama3.1", false},
		{"nothing", map[string]string{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			tt.env["REEF_HOME"] = home
			path := writeConfig(t, home, string(Example))
			c, err := Load(path, envOf(tt.env))
			if tt.noProv {
				if !errors.Is(err, ErrNoProvider) || len(errLines(err)) != 1 {
					t.Fatalf("Load = %v, want only ErrNoProvider", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := c.Agents[0].Model; got != tt.model {
				t.Errorf("model = %q, want %q", got, tt.model)
			}
		})
	}
}
