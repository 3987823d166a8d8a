package exec

import "strings"

// MarkerEnv is set in the environment of every command exec runs, to a fresh id per call:
// reef finds the processes of a call by it (even after they left its process group) and the
// control socket refuses a process that carries it (Started).
const MarkerEnv = "REEF_EXEC_CALL"

// secretNames are variables always withheld from commands, whatever their value.
var secretNames = map[string]bool{
	"OPENAI_API_KEY":     true,
	"ANTHROPIC_API_KEY":  true,
	"GEMINI_API_KEY":     true,
	"TELEGRAM_BOT_TOKEN": true,
	"DISCORD_BOT_TOKEN":  true,
	"FEISHU_APP_SECRET":  true,
}

// secretSuffixes mark a variable name as holding a credential.
var secretSuffixes = []string{"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"}

// FilterEnv returns environ ("NAME=value" entries) without the gateway's secrets: variables
// named REEF_*, *_API_KEY, *_TOKEN, *_SECRET or *_PASSWORD (in any case), the providers' and
// channels' credential variables, and any variable whose value contains one of secrets.
func FilterEnv(environ, secrets []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || secretName(name) || holdsSecret(value, secrets) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func secretName(name string) bool {
	u := strings.ToUpper(name)
	if strings.HasPrefix(u, "REEF_") || secretNames[u] {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(u, s) || u == s[1:] {
			return true
		}
	}
	return false
}

func holdsSecret(value string, secrets []string) bool {
	for _, s := range secrets {
		if s != "" && strings.Contains(value, s) {
			return true
		}
	}
	return false
}
