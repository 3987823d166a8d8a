// Package message is the message tool: the agent sends a message to the conversation it is
// answering while its run goes on (a progress note, a partial result before a long step).
// reef does not deliver a final reply that only repeats what this tool already sent.
//
// Besides {text} it takes OpenClaw's shape, {action, target, message, replyTo, ...}: send
// and reply (a native quoted reply), to this conversation or, with the rights of
// sessions_send, to another chat of the same channel account; react sets the bot's emoji
// reaction where the platform has them (Telegram, Discord); edit changes the text of a
// message reef sent in this conversation and delete removes one (Telegram, Discord, Feishu).
// A send answers with the platform id of the message, for a later edit or delete. media sends
// a file of the workspace (or an https URL) natively: a photo or a document (docs/media.md).
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
		return change(ctx, call, a, action)
	default:
		return tools.Result{}, fmt.Errorf("unknown action %q (send, reply, react, edit or delete)", a.Action)
	}
	text := strings.TrimSpace(a.Text)
	if text == "" {
		text = strings.TrimSpace(a.Message)
	}
	media, err := checkMedia(call.Env, a.Media)
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
	m, ok := call.Env.Runtime.(tools.Messenger)
	if !ok && req.Target == "" && req.ReplyTo == "" && !req.Reply && req.Media == nil {
		if err := call.Env.Runtime.Message(ctx, call.Env.SessionKey, text); err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Content: "sent"}, nil
	}
	if !ok {
		return tools.Result{}, errors.New("target and replies are not available here; send to this conversation with text only")
	}
	res, err := m.SendMessage(ctx, call.Env.SessionKey, req)
	if err != nil {
		return tools.Result{}, err
	}
	content := "sent"
	switch {
	case req.Target != "":
		content = "sent to " + req.Target
	case media != "":
		content = "sent " + media
	}
	return tools.Result{Content: content + withIDs(res)}, nil
}

// withIDs names the messages a request sent, for a later edit or delete.
func withIDs(res tools.MessageResult) string {
	switch len(res.MessageIDs) {
	case 0:
		return ""
	case 1:
		return " (messageId " + res.MessageIDs[0] + ")"
	}
	return " (messageIds " + strings.Join(res.MessageIDs, ", ") + "; edit or delete the first)"
}

// change edits or deletes a message reef sent in this conversation: messageId, else the
// last one it sent here.
func change(ctx context.Context, call tools.Call, a args, action string) (tools.Result, error) {
	text := strings.TrimSpace(a.Text)
	if text == "" {
		text = strings.TrimSpace(a.Message)
	}
	switch {
	case action == "edit" && text == "":
		return tools.Result{}, errors.New("edit needs the new text in message (or text)")
	case len(text) > MaxText:
		return tools.Result{}, errors.New("text is too long (16 KB at most)")
	case strings.TrimSpace(a.Media) != "":
		return tools.Result{}, errors.New("media cannot be edited into a message; send a new message with media")
	case call.Env.Runtime == nil || call.Env.SessionKey == "":
		return tools.Result{}, errors.New("message is not available here (no conversation)")
	}
	m, ok := call.Env.Runtime.(tools.Messenger)
	if !ok {
		return tools.Result{}, fmt.Errorf("%s is not supported on %s", action, platform(call.Env.Channel))
	}
	req := tools.MessageRequest{Text: text, MessageID: strings.TrimSpace(a.MessageID), Target: strings.TrimSpace(a.Target),
		Edit: action == "edit", Delete: action == "delete"}
	res, err := m.SendMessage(ctx, call.Env.SessionKey, req)
	if err != nil {
		return tools.Result{}, err
	}
	if action == "edit" {
		return tools.Result{Content: "edited" + withIDs(res)}, nil
	}
	return tools.Result{Content: "deleted" + withIDs(res)}, nil
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
	if _, err := m.SendMessage(ctx, call.Env.SessionKey, req); err != nil {
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
	`reaction on messageId (default: the message you answer). A send answers with the messageId of what ` +
	`it sent: action "edit" replaces the text of that message with message, action "delete" removes it ` +
	`(messageId defaults to the last message you sent in this conversation; only your own messages). ` +
	`media sends a file: a path in your workspace or an https URL (a photo is shown as a photo, other ` +
	`files as documents).`

const schema = `{"type":"object","properties":{` +
	`"text":{"type":"string","description":"the message to send"},` +
	`"action":{"type":"string","enum":["send","reply","react","edit","delete"],"description":"send (default), reply, react, edit or delete"},` +
	`"message":{"type":"string","description":"the message to send (same as text)"},` +
	`"target":{"type":"string","description":"another chat of this channel: its chat id or a session key; omit it (or \"current\") for this conversation"},` +
	`"replyTo":{"type":"string","description":"message id to quote"},` +
	`"emoji":{"type":"string","description":"for react: one emoji"},` +
	`"messageId":{"type":"string","description":"for react: the message (default: the one you answer); for edit and delete: a message you sent (default: the last one)"},` +
	`"media":{"type":"string","description":"a file to send: a workspace path (e.g. chart.png) or an https URL"}}}`
