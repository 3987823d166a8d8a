package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
)

// runFakeLLM serves a scripted OpenAI-compatible model on loopback, so reef can be tried (and
// benchmarked) with no API key and no network. It echoes what it is told, and shows tool use:
// "ls" makes it list the workspace, "write NAME TEXT" makes it write a file, "recall QUERY"
// searches memory, "fetch URL" fetches a page, "search QUERY" searches the web, "exec CMD"
// runs a command, "call TOOL {json}" calls any tool (an MCP server's, for one). It serves
// /v1/embeddings too (memory search).
func runFakeLLM(args []string, stdout, stderr io.Writer) int {
	flags := newFlags("fake-llm", stderr)
	addr := flags.String("addr", defaultFakeAddr, "address to listen on (:0 or 127.0.0.1:0 for any free port)")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil && !setOnCommandLine(flags, "addr") { // the default port is taken: any free one will do
		fmt.Fprintf(stderr, "reef fake-llm: %s is taken; using a free port instead\n", defaultFakeAddr)
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef fake-llm: %v\n", err)
		return 1
	}
	script := fake.NewScript()
	script.KeepRequests = 1
	script.Models = []string{"fake"} // what the line to paste names (it answers any model)
	script.Respond = fakeReply
	stop := make(chan struct{})
	srv := &http.Server{Handler: fake.OpenAIHandler(script, stop)}
	url := "http://" + dialAddr(ln.Addr()) + "/v1"
	fmt.Fprintf(stdout, "fake LLM on %s — in another terminal, paste:\n\n  OPENAI_BASE_URL=%s REEF_MODEL=openai/fake reef chat\n\n", url, url)
	go func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		<-sigs
		close(stop)
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "reef fake-llm: %v\n", err)
		return 1
	}
	return 0
}

// setOnCommandLine reports whether the command line set the flag name.
func setOnCommandLine(flags *flag.FlagSet, name string) bool {
	set := false
	flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// defaultFakeAddr is where reef fake-llm listens unless told otherwise.
const defaultFakeAddr = "127.0.0.1:8089"

// dialAddr is addr as a client dials it: a listener on every address (":0") is reached
// on 127.0.0.1.
func dialAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// fakeReply answers the newest user message, or reports on the tool results it asked for.
func fakeReply(r fake.Request) fake.Reply {
	last := r.Messages[len(r.Messages)-1]
	if rep, ok := fakeDelegation(r, last); ok {
		return rep
	}
	if last.Role == messages.RoleTool {
		return fake.Reply{Text: toolSummary(last)}
	}
	text := userText(last.Content)
	if isSystemPrompt(text) { // reef's own prompts
		return systemReply(text)
	}
	switch fields := strings.Fields(strings.ToLower(text)); {
	case len(fields) > 0 && len(fields) <= 3 && greetings[strings.Trim(fields[0], "!.,")]:
		return fake.Reply{Text: "Hello! I am reef's fake model, here to show what reef does without an API key: " + fakeMenu}
	}
	switch fields := strings.Fields(text); {
	case len(fields) == 1 && fields[0] == "ls":
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{"path":"."}`}}}
	case len(fields) >= 2 && fields[0] == "exec":
		args, _ := json.Marshal(map[string]string{"command": strings.Join(fields[1:], " ")})
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "exec", Arguments: string(args)}}}
	case len(fields) == 2 && fields[0] == "fetch":
		args, _ := json.Marshal(map[string]string{"url": fields[1]})
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "web_fetch", Arguments: string(args)}}}
	case len(fields) >= 2 && fields[0] == "search":
		args, _ := json.Marshal(map[string]string{"query": strings.Join(fields[1:], " ")})
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "web_search", Arguments: string(args)}}}
	case len(fields) >= 2 && fields[0] == "recall":
		args, _ := json.Marshal(map[string]string{"query": strings.Join(fields[1:], " ")})
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "memory_search", Arguments: string(args)}}}
	case len(fields) >= 2 && fields[0] == "delegate":
		args, _ := json.Marshal(map[string]string{"task": strings.Join(fields[1:], " "), "label": "helper"})
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "sessions_spawn", Arguments: string(args)}}}
	case len(fields) >= 2 && fields[0] == "say": // answers the rest verbatim (try reply directives)
		return fake.Reply{Text: strings.TrimSpace(strings.TrimPrefix(text, "say"))}
	case len(fields) >= 2 && fields[0] == "call": // any tool by name: call everything__echo {"message":"hi"}
		args := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "call "+fields[1]))
		if args == "" {
			args = "{}"
		}
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: fields[1], Arguments: args}}}
	case len(fields) >= 3 && fields[0] == "write":
		args, _ := json.Marshal(map[string]string{"path": fields[1], "content": strings.Join(fields[2:], " ") + "\n"})
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "write", Arguments: string(args)}}}
	}
	return fake.Reply{Text: fmt.Sprintf("You said: %q (message %d of this conversation). I am reef's fake model: %s",
		text, countUser(r.Messages), fakeMenu)}
}

// fakeMenu is the fake model's list of things to try.
const fakeMenu = `say "ls", "write notes.txt hello", "recall what I like" (memory_search), "fetch https://example.com" (web_fetch), ` +
	`"exec sleep 5" or "delegate list the files" to see tools work.`

var greetings = map[string]bool{"hello": true, "hi": true, "hey": true, "hallo": true, "bonjour": true, "hola": true, "你好": true}

// isSystemPrompt reports whether text is one of reef's own prompts (a new session, a cron
// reminder, a heartbeat, an internal event) or wraps untrusted data, not a person's words.
func isSystemPrompt(text string) bool {
	for _, p := range []string{"[New session]", "[Scheduled reminder]", "[Internal event", "[System", "[Heartbeat"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return strings.Contains(text, "<<<UNTRUSTED") || strings.Contains(text, "HEARTBEAT_OK")
}

// systemReply answers reef's own prompts (a new session's greeting request, heartbeats, cron
// and other system events) as a model would, without echoing them.
func systemReply(text string) fake.Reply {
	switch {
	case strings.Contains(text, "[New session]"), strings.Contains(text, "A new session was started"):
		return fake.Reply{Text: "Hello! A fresh conversation. I am reef's fake model: " + fakeMenu}
	case strings.Contains(text, "HEARTBEAT_OK"):
		return fake.Reply{Text: "HEARTBEAT_OK"}
	}
	return fake.Reply{Text: "Noted (a system event; reef's fake model has nothing to add)."}
}

// toolSummary is a one-line report on a tool's result, without reef's untrusted-data markers.
func toolSummary(m messages.ChatMessage) string {
	var lines []string
	for _, l := range strings.Split(m.Content, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "<<<UNTRUSTED") && !strings.HasPrefix(t, "<<<END_UNTRUSTED") {
			lines = append(lines, t)
		}
	}
	name := m.ToolName
	if name == "" {
		name = "the tool"
	}
	if len(lines) == 0 {
		return fmt.Sprintf("Done. %s returned nothing.", name)
	}
	first := []rune(lines[0])
	if len(first) > 80 {
		first = append(first[:79], '…')
	}
	more := ""
	if len(lines) > 1 {
		more = fmt.Sprintf(" (and %d more line(s))", len(lines)-1)
	}
	return fmt.Sprintf("Done. %s said %q%s.", name, string(first), more)
}

// userText strips the metadata block reef puts before the user's own words.
func userText(content string) string {
	if i := strings.LastIndex(content, ">>>"); i >= 0 {
		return strings.TrimSpace(content[i+3:])
	}
	return strings.TrimSpace(content)
}

func countUser(msgs []messages.ChatMessage) int {
	n := 0
	for _, m := range msgs {
		if m.Role == messages.RoleUser {
			n++
		}
	}
	return n
}

// fakeDelegation plays "delegate TASK": the parent spawns a sub-agent and yields; the
// sub-agent lists the workspace and answers; the parent reports the completion.
func fakeDelegation(r fake.Request, last messages.ChatMessage) (fake.Reply, bool) {
	child := strings.Contains(r.Messages[0].Content, "[Sub-agent task]")
	switch {
	case child && last.Role == messages.RoleTool:
		return fake.Reply{Text: "I listed the workspace:\n" + last.Content}, true
	case child:
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "ls", Arguments: `{"path":"."}`}}}, true
	case last.Role == messages.RoleTool && strings.Contains(last.Content, `"status":"accepted"`):
		return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "call_2", Name: "sessions_yield", Arguments: `{"message":"waiting for helper"}`}}}, true
	case strings.Contains(last.Content, "[Internal event: a sub-agent finished"):
		_, rest, _ := strings.Cut(last.Content, "status: ")
		status, _, _ := strings.Cut(rest, "\n")
		return fake.Reply{Text: "Your sub-agent finished (status: " + status + "). Its answer is in the completion event; ask /subagents log 1 for its steps."}, true
	}
	return fake.Reply{}, false
}
