package main

import (
	"os"
	"slices"
	"strings"

	"github.com/reefgw/reef/configs"
)

// secretEnvSuffixes name the variables reef reads credentials from (OPENAI_API_KEY,
// TELEGRAM_BOT_TOKEN, FEISHU_APP_SECRET...).
var secretEnvSuffixes = []string{"_API_KEY", "_BOT_TOKEN", "_APP_SECRET"}

// hardenProcess is called by the commands that run agents (chat, gateway) once the
// configuration is loaded. It makes reef not dumpable, so that a command the agent runs as
// the same (non-root) user cannot read /proc/<reef>/environ, memory or file descriptors, and
// it removes the credential variables from reef's environment: the configuration holds their
// values, and a reload reads them from the copy the gateway took before (envSnapshot). Unsetenv does not scrub
// /proc/<reef>/environ, which shows the environment reef started with: that is why not
// being dumpable matters. It returns what went wrong, for a warning.
func hardenProcess(cfg *configs.Config) error {
	secrets := cfg.Secrets()
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if secretEnvName(name) || (value != "" && slices.Contains(secrets, value)) {
			os.Unsetenv(name)
		}
	}
	return notDumpable()
}

func secretEnvName(name string) bool {
	u := strings.ToUpper(name)
	for _, s := range secretEnvSuffixes {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	return false
}

// envSnapshot is the environment as reef started with it, for reloads of the configuration
// after hardenProcess removed the credentials from the process's own environment (exec's
// commands and MCP servers inherit that one). A variable exported later cannot reach a
// running process anyway: a new ${NAME} needs a restart.
func envSnapshot() func(string) string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
	}
	return func(name string) string { return env[name] }
}
