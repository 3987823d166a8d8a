// Package message is the message tool: the agent sends a message to the conversation it is
// answering while its run goes on (a progress note, a partial result before a long step).
// reef does not deliver a final reply that only repeats what this tool already sent.
package message

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// MaxText caps one message, in bytes.
const MaxText = 16 << 10

// Tool is the message tool.
type Tool struct{}

// New returns the message tool.
func New() Tool { return Tool{} }

func (Tool) Spec() messages.ToolSpec {
	return messages.ToolSpec{Name: "message", Description: description, Parameters: json.RawMessage(schema)}
}

type args struct {
	Text string `json:"text"`
}

func (Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a args
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	text := strings.TrimSpace(a.Text)
	switch {
	case text == "":
		return tools.Result{}, errors.New("text is required")
	case len(text) > MaxText:
		return tools.Result{}, errors.New("text is too long (16 KB at most); send less or put it in a file")
	case call.Env.Runtime == nil || call.Env.SessionKey == "":
		return tools.Result{}, errors.New("message is not available here (no conversation to send to)")
	}
	if err := call.Env.Runtime.Message(ctx, call.Env.SessionKey, text); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: "sent"}, nil
}

const description = `Send a message to the user in this conversation right now, while you keep working ` +
	`(e.g. "Found it, now running the tests…"). Your final answer is still sent at the end; do not ` +
	`repeat in it what you already sent with this tool.`

const schema = `{"type":"object","properties":{"text":{"type":"string","description":"the message to send"}},"required":["text"]}`
