package actors

import (
	"strings"

	"github.com/reefgw/reef/messages"
)

// command is a slash command a person typed: "/queue collect 2s" → {name: "queue", args: ["collect", "2s"]}.
type command struct {
	name string
	args []string
	rest string // the text after the command word, as typed (for /compact instructions)
	bare bool   // a word without a slash ("stop")
}

// commandHelp is what /help shows, in this order. A name missing here is not a command, so
// "/tmp/x is full" stays a message for the model.
var commandHelp = []struct{ name, usage string }{
	{"new", "/new [model] — start a fresh session (optionally on another model)"},
	{"reset", "/reset — start a fresh session"},
	{"stop", "/stop or stop — stop the current run and drop queued messages"},
	{"status", "/status — session, model, tokens, context, queue, running tools"},
	{"compact", "/compact [instructions] — summarize older messages to free context"},
	{"model", "/model [name] — show or switch this session's model"},
	{"think", "/think off|low|medium|high — how hard the model reasons"},
	{"reasoning", "/reasoning on|off — show the model's reasoning before its replies"},
	{"queue", "/queue steer|followup|collect|interrupt [debounce] [cap] [drop] — messages sent during a run"},
	{"approve", "/approve <id> [always] — (owner) run a command waiting for approval; always: also later ones with its prefix"},
	{"deny", "/deny <id> — (owner) refuse a command waiting for approval"},
	{"approvals", "/approvals [revoke <prefix>] — (owner) commands waiting for approval, and prefixes allowed always"},
	{"subagents", "/subagents list|kill <n|label|all>|log <n|label> — this conversation's sub-agents"},
	{"help", "/help — this list"},
}

// parseCommand reads a command from the text a person sent. Only that text is ever parsed:
// never quoted text, tool output or the model's words. A leading mention ("@bot /stop") and a
// Telegram bot suffix ("/stop@reef_bot") are ignored; a bare "stop" is /stop.
func parseCommand(in *messages.Inbound) (command, bool) {
	if in.System {
		return command{}, false
	}
	text := strings.TrimSpace(in.Text)
	if strings.HasPrefix(text, "@") { // "@reef_bot /new" in a group
		if _, after, ok := strings.Cut(text, " "); ok {
			text = strings.TrimSpace(after)
		}
	}
	if strings.EqualFold(strings.TrimRight(text, ".!"), "stop") {
		return command{name: "stop", bare: true}, true
	}
	if !strings.HasPrefix(text, "/") {
		return command{}, false
	}
	word, rest, _ := strings.Cut(text[1:], " ")
	if nl := strings.IndexByte(word, '\n'); nl >= 0 {
		word, rest = word[:nl], word[nl+1:]+" "+rest
	}
	word, _, _ = strings.Cut(word, "@")
	word = strings.ToLower(word)
	for _, h := range commandHelp {
		if h.name == word {
			rest = strings.TrimSpace(rest)
			return command{name: word, args: strings.Fields(rest), rest: rest}, true
		}
	}
	return command{}, false
}

// helpText lists the commands.
func helpText() string {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, h := range commandHelp {
		b.WriteString("\n")
		b.WriteString(h.usage)
	}
	return b.String()
}
