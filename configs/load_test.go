package configs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfig writes body to dir/reef.yaml and returns the path.
func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	path := filepath.Join(dir, "reef.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// errLines splits a joined error into its lines.
func errLines(err error) []string {
	if err == nil {
		return nil
	}
	return strings.Split(err.Error(), "\n")
}

func TestLoadReportsFileProblems(t *testing.T) {
	env := envOf(map[string]string{"OPENAI_API_KEY": "sk-test-secret-value", "HOME": "/home/u"})
	tests := []struct {
		name string
		body string
		want []string // each must appear in the error
	}{
		{
			name: "unknown key with line, path and suggestion",
			body: "agents:\n  - id: main\n    modle: openai/gpt-4.1-mini\n",
			want: []string{`reef.yaml:3: unknown key "modle" in agents[0] (did you mean "model"?)`},
		},
		{
			name: "unknown top-level key lists known keys when nothing is close",
			body: "llm:\n  maxRetries: 2\nfrobnicate: true\n",
			want: []string{`reef.yaml:3: unknown key "frobnicate" at the top level (known keys: agents, backup, bindings, channels, cluster, cron, dataDir, gateway, llm, log, mcp, media, memory, models, providers, session, storage, tools)`},
		},
		{
			name: "unknown keys inside maps and nested structs, all reported",
			body: "providers:\n  openai:\n    api_key: x\nmodels:\n  openai/gpt-4.1:\n    toolmode: native\ntools:\n  exec:\n    timeout: 5\n",
			want: []string{
				`reef.yaml:3: unknown key "api_key" in providers.openai (did you mean "apiKey"?)`,
				`reef.yaml:6: unknown key "toolmode" in models["openai/gpt-4.1"] (did you mean "toolMode"?)`,
				`reef.yaml:9: unknown key "timeout" in tools.exec`,
			},
		},
		{
			name: "a misspelt approvals key",
			body: "tools:\n  exec:\n    approval: always\n",
			want: []string{`reef.yaml:3: unknown key "approval" in tools.exec (did you mean "approvals"?)`},
		},
		{
			name: "wrong type names path and line",
			body: "llm:\n  maxConcurrent: lots\n",
			want: []string{`reef.yaml:2: llm.maxConcurrent: got "lots", want a whole number`},
		},
		{
			name: "scalar where a list or mapping belongs",
			body: "agents: main\nlog: debug\n",
			want: []string{`reef.yaml:1: agents: got "main", want a list`, `reef.yaml:2: log: got "debug", want a mapping`},
		},
		{
			name: "a secret in a wrong-typed value is not shown",
			body: "llm:\n  maxRetries: ${OPENAI_API_KEY}\n",
			want: []string{`reef.yaml:2: llm.maxRetries: got "${OPENAI_API_KEY}", want a whole number`},
		},
		{
			name: "problems in the file and in validation come together",
			body: "sesion: {}\nsession:\n  dmScope: nobody\n",
			want: []string{`reef.yaml:1: unknown key "sesion" at the top level (did you mean "session"?)`, `session.dmScope: "nobody" is not valid`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(writeConfig(t, t.TempDir(), tt.body), env)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q; got:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "sk-test-secret-value") {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}

func TestLoadSyntaxError(t *testing.T) {
	path := writeConfig(t, t.TempDir(), "llm:\n  maxRetries: 1\n bad: [\n")
	c, err := Load(path, envOf(nil))
	if err == nil || c != nil {
		t.Fatalf("Load = %v, %v; want nil config and a syntax error", c, err)
	}
	if !strings.HasPrefix(err.Error(), path+":") {
		t.Errorf("error %q does not start with %q", err, path+":")
	}
}

func TestLoadExplicitMissingFileIsAnError(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), envOf(map[string]string{"OPENAI_API_KEY": "k"}))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) error = %v, want fs.ErrNotExist", err)
	}
}

func TestLoadDefault(t *testing.T) {
	t.Run("missing file continues with defaults", func(t *testing.T) {
		home := t.TempDir()
		c, err := LoadDefault(envOf(map[string]string{"REEF_HOME": home, "ANTHROPIC_API_KEY": "sk-ant"}))
		if err != nil {
			t.Fatalf("LoadDefault: %v", err)
		}
		if got, want := c.Agents[0].Model, "anthropic/claude-sonnet-4-5"; got != want {
			t.Errorf("model = %q, want %q", got, want)
		}
		if got, want := c.DataDir, filepath.Join(home, "data"); got != want {
			t.Errorf("dataDir = %q, want %q", got, want)
		}
	})
	t.Run("file in REEF_HOME is read", func(t *testing.T) {
		home := t.TempDir()
		writeConfig(t, home, "log:\n  level: debug\n")
		c, err := LoadDefault(envOf(map[string]string{"REEF_HOME": home, "OPENAI_API_KEY": "k"}))
		if err != nil {
			t.Fatalf("LoadDefault: %v", err)
		}
		if c.Log.Level != "debug" {
			t.Errorf("log.level = %q, want debug", c.Log.Level)
		}
	})
	t.Run("no provider", func(t *testing.T) {
		c, err := LoadDefault(envOf(map[string]string{"REEF_HOME": t.TempDir()}))
		if !errors.Is(err, ErrNoProvider) {
			t.Fatalf("LoadDefault error = %v, want ErrNoProvider", err)
		}
		if c == nil {
			t.Fatal("config is nil; want it returned with the validation error")
		}
		if n := len(errLines(err)); n != 1 {
			t.Errorf("got %d problems, want only the missing provider:\n%v", n, err)
		}
	})
}

func TestLoadEmptyFile(t *testing.T) {
	c, err := Load(writeConfig(t, t.TempDir(), "# nothing yet\n"), envOf(map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "REEF_MODEL": "openai/llama3.1"}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Agents[0].Model != "openai/llama3.1" {
		t.Errorf("model = %q, want openai/llama3.1", c.Agents[0].Model)
	}
}

func TestLoadUnsetVariableNamesKey(t *testing.T) {
	body := "# ${IN_A_COMMENT} is ignored\nproviders:\n  openai:\n    apiKey: ${OPENAI_API_KEY}\n  local:\n    type: openai\n    baseUrl: ${LOCAL_URL:-http://127.0.0.1:8000/v1}\n"
	_, err := Load(writeConfig(t, t.TempDir(), body), envOf(nil))
	want := "providers.openai.apiKey: ${OPENAI_API_KEY} is not set"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want it to contain %q", err, want)
	}
	if strings.Contains(err.Error(), "IN_A_COMMENT") || strings.Contains(err.Error(), "LOCAL_URL") {
		t.Errorf("error mentions a variable that is not a problem: %v", err)
	}
}
