package main

// What goes into the service's files: the secrets the environment file takes, the paths the
// unit may write, the binary it runs.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/configs"
)

// serviceEnvName is a variable name in an environment file or a ${VAR} reference.
var serviceEnvRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// memoryMaxPattern is what --memory-max accepts: a systemd size or percentage.
var memoryMaxPattern = regexp.MustCompile(`^([0-9]+[KMGT]?|[0-9]+%|infinity)$`)

// wellKnownEnv are the variables reef reads without a ${VAR} in reef.yaml (configs' defaults).
var wellKnownEnv = []string{"REEF_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
	"ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GEMINI_BASE_URL", "TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN",
	"FEISHU_APP_ID", "FEISHU_APP_SECRET", "BRAVE_API_KEY", "TAVILY_API_KEY", "SEARXNG_URL", "REEF_DATABASE_URL"}

// serviceSecrets returns the variables the service needs from the installing shell: those
// the config file names as ${VAR} in its values (comments aside) and the well-known ones,
// each only when set. REEF_HOME is the unit's own.
func serviceSecrets(configText []byte, getenv func(string) string) ([][2]string, error) {
	names := map[string]bool{}
	for _, n := range wellKnownEnv {
		names[n] = true
	}
	var doc yaml.Node
	if len(configText) > 0 {
		if err := yaml.Unmarshal(configText, &doc); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			for _, m := range serviceEnvRef.FindAllStringSubmatch(n.Value, -1) {
				names[m[1]] = true
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	delete(names, "REEF_HOME")
	var out [][2]string
	for n := range names {
		if v := getenv(n); v != "" {
			if strings.ContainsAny(v, "\n\r\x00") {
				return nil, fmt.Errorf("$%s holds a line break: an environment file cannot carry it", n)
			}
			out = append(out, [2]string{n, v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out, nil
}

// serviceConfig reads the config the service will use, as it will see it (REEF_HOME=home):
// its text (nil when there is none) and what it sets, for the paths the unit must let reef
// write. A config that does not load is fine here (doctor says why); a YAML error is not.
func (h serviceHost) serviceConfig(o serviceOptions, home string) (path string, text []byte, cfg *configs.Config, err error) {
	env := func(k string) string {
		if k == "REEF_HOME" {
			return home
		}
		return h.getenv(k)
	}
	path = o.config
	if path == "" {
		path = filepath.Join(home, "reef.yaml")
	}
	text, err = os.ReadFile(h.path(path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return path, nil, nil, fmt.Errorf("config: %w", err)
	}
	if err != nil {
		cfg, _ = configs.LoadDefault(func(k string) string {
			if k == "REEF_HOME" {
				return h.path(home)
			}
			return h.getenv(k)
		})
		return path, nil, cfg, nil
	}
	cfg, _ = configs.Load(h.path(path), env)
	return path, text, cfg, nil
}

// writablePaths are the directories reef writes: home, and the data directory and workspaces
// the config puts outside it.
func writablePaths(home string, cfg *configs.Config) []string {
	paths := []string{home}
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		for _, q := range paths {
			if p == q || strings.HasPrefix(p, q+string(filepath.Separator)) {
				return
			}
		}
		paths = append(paths, p)
	}
	if cfg != nil {
		add(cfg.DataDir)
		for _, a := range cfg.Agents {
			add(a.Workspace)
		}
	}
	return paths
}

// unitSafe refuses a path a unit file cannot hold as written (specifiers, quoting, spaces).
func unitSafe(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q: want an absolute path", what, p)
	}
	if strings.ContainsAny(p, " \t\n\"'\\%;$") {
		return fmt.Errorf("%s %q: choose a path without spaces, quotes, %%, ; or $", what, p)
	}
	return nil
}

// envFileValue quotes v for a systemd environment file: single quotes keep everything as
// written; a value holding one goes in double quotes with \ " $ ` escaped.
func envFileValue(v string) string {
	if !strings.Contains(v, "'") {
		return "'" + v + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(v) + `"`
}

// serviceBinary is the reef the service runs: --binary, else this executable.
func serviceBinary(o serviceOptions) (string, error) {
	if o.binary != "" {
		return filepath.Abs(o.binary)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this reef is (%v): give --binary", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return exe, nil
}
