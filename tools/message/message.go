// Package message is the message tool: the agent sends a message to the conversation it is
// answering while its run goes on (a progress note, a partial result before a long step).
// reef does not deliver a final reply that only repeats what this tool already sent.
//
// Besides {text} it takes OpenClaw's shape, {action, target, message, replyTo, ...}: send
// and reply (a native quoted reply), to this conversation or, with the rights of
// sessions_send, to another chat of the same channel account; react sets the bot's emoji
// reaction where the platform has them (Telegram, Discord); media sends a file of the workspace
// (or an https URL) natively: a photo or a document (docs/media.md). edit and delete are
// refused with a clear error for now.
package message

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	Text      string `json:"text"`
	Action    string `json:"action"`
	Message   string `json:"message"` // OpenClaw's name for text
	Target    string `json:"target"`
	ReplyTo   string `json:"replyTo"`
	Media     string `json:"media"` // a workspace path or an https URL (media.go)
	Emoji     string `json:"emoji"`
	MessageID string `json:"messageId"`
}

func (Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a args
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	action := strings.ToLower(strings.TrimSpace(a.Action))
	switch action {
	case "", "send", "reply":
	case "react":
		return react(ctx, call, a)
	case "edit", "delete":
		return tools.Result{}, fmt.Errorf("action %q is not supported by reef yet on %s; send a new message instead", action, platform(call.Env.Channel))
	default:
		return tools.Result{}, fmt.Errorf("unknown action %q (send, reply, react, edit or delete)", a.Action)
	}
	text := strings.TrimSpace(a.Text)
	if text == "" {
		text = strings.TrimSpace(a.Message)
	}
	media, err := checkMedia(call.Env.Workspace, a.Media)
	switch {
	case err != nil:
		return tools.Result{}, err
	case text == "" && media == "":
		return tools.Result{}, errors.New("text is required (or message, or media)")
	case len(text) > MaxText:
		return tools.Result{}, errors.New("text is too long (16 KB at most); send less or put it in a file")
	case call.Env.Runtime == nil || call.Env.SessionKey == "":
		return tools.Result{}, errors.New("message is not available here (no conversation to send to)")
	}
	req := tools.MessageRequest{Text: text, Target: strings.TrimSpace(a.Target), ReplyTo: strings.TrimSpace(a.ReplyTo), Reply: action == "reply"}
	if media != "" {
		req.Media = []string{media}
	}
	if req.Target == "" && req.ReplyTo == "" && !req.Reply && req.Media == nil {
		if err := call.Env.Runtime.Message(ctx, call.Env.SessionKey, text); err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Content: "sent"}, nil
	}
	m, ok := call.Env.Runtime.(tools.Messenger)
	if !ok {
		return tools.Result{}, errors.New("target and replies are not available here; send to this conversation with text only")
	}
	if err := m.SendMessage(ctx, call.Env.SessionKey, req); err != nil {
		return tools.Result{}, err
	}
	if req.Target != "" {
		return tools.Result{Content: "sent to " + req.Target}, nil
	}
	if media != "" {
		return tools.Result{Content: "sent " + media}, nil
	}
	return tools.Result{Content: "sent"}, nil
}

// react sets an emoji reaction on a message of this conversation (messageId, or replyTo, or
// the message the run answers).
func react(ctx context.Context, call tools.Call, a args) (tools.Result, error) {
	emoji := strings.TrimSpace(a.Emoji)
	id := strings.TrimSpace(a.MessageID)
	if id == "" {
		id = strings.TrimSpace(a.ReplyTo)
	}
	switch {
	case emoji == "":
		return tools.Result{}, errors.New("emoji is required to react")
	case len(emoji) > 64:
		return tools.Result{}, errors.New("emoji is one emoji")
	case call.Env.Runtime == nil || call.Env.SessionKey == "":
		return tools.Result{}, errors.New("message is not available here (no conversation to react in)")
	}
	m, ok := call.Env.Runtime.(tools.Messenger)
	if !ok {
		return tools.Result{}, fmt.Errorf("reactions are not supported on %s", platform(call.Env.Channel))
	}
	req := tools.MessageRequest{React: true, Emoji: emoji, MessageID: id, Target: strings.TrimSpace(a.Target)}
	if err := m.SendMessage(ctx, call.Env.SessionKey, req); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Content: "reacted " + emoji}, nil
}

// platform names a channel for an error message.
func platform(channel string) string {
	if channel == "" {
		return "this channel"
	}
	return channel
}

const description = `Send a message to the user in this conversation right now, while you keep working ` +
	`(e.g. "Found it, now running the tests…"). Your final answer is still sent at the end; do not ` +
	`repeat in it what you already sent with this tool. action "reply" quotes the message you answer, ` +
	`or the one replyTo names (a message id from the metadata). target sends to another chat of this ` +
	`channel instead (its chat id or session key), where allowed. action "react" sets emoji as your ` +
	`reaction on messageId (default: the message you answer). media sends a file: a path in your ` +
	`workspace or an https URL (a photo is shown as a photo, other files as documents).`

const schema = `{"type":"object","properties":{` +
	`"text":{"type":"string","description":"the message to send"},` +
	`"action":{"type":"string","enum":["send","reply","react","edit","delete"],"description":"send (default), reply or react"},` +
	`"message":{"type":"string","description":"the message to send (same as text)"},` +
	`"target":{"type":"string","description":"another chat of this channel: its chat id or a session key; omit for this conversation"},` +
	`"replyTo":{"type":"string","description":"message id to quote"},` +
	`"emoji":{"type":"string","description":"for react: one emoji"},` +
	`"messageId":{"type":"string","description":"for react: the message (default: the one you answer)"},` +
	`"media":{"type":"string","description":"a file to send: a workspace path (e.g. chart.png) or an https URL"}}}`
