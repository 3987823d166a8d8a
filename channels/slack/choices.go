package slack

import (
	"context"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Buttons. With Config.Buttons (the app has Interactivity on: Socket Mode needs no Request
// URL), a reply that offers choices (an exec approval's /approve and /deny) shows one button
// each under its last message, and a press comes back over Socket Mode as a block_actions
// interaction, which reef takes as the message the button stands for, from the person who
// pressed it: the same access rules and owner checks as a typed /approve. The text always
// names the commands too, so without buttons (or in a client that does not show them) the
// reply reads as before.

// choicePrefix starts the action_id of reef's buttons.
const choicePrefix = "reef_choice_"

// maxSectionText is the longest text of a section block; a longer last message gets no
// buttons (it keeps its text, which names the commands).
const maxSectionText = 3000

// maxButtons is how many buttons an actions block holds.
const maxButtons = 25

// choiceBlocks returns the blocks of a message text with the reply's choices as buttons, or
// nil when there are none to show.
func (b *Bot) choiceBlocks(text string, choices []messages.Choice) []slackapi.Block {
	if !b.cfg.Buttons || len(choices) == 0 || channels.Runes(text) > maxSectionText {
		return nil
	}
	var buttons []slackapi.BlockElement
	for i, c := range choices[:min(len(choices), maxButtons)] {
		if c.Text == "" || c.Label == "" {
			continue
		}
		btn := slackapi.NewButtonBlockElement(choicePrefix+strconv.Itoa(i), c.Text,
			slackapi.NewTextBlockObject(slackapi.PlainTextType, c.Label, false, false))
		switch {
		case strings.HasPrefix(c.Text, "/deny"):
			btn = btn.WithStyle(slackapi.StyleDanger)
		case i == 0:
			btn = btn.WithStyle(slackapi.StylePrimary)
		}
		buttons = append(buttons, btn)
	}
	if len(buttons) == 0 {
		return nil
	}
	section := slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, text, false, false), nil, nil)
	return []slackapi.Block{section, slackapi.NewActionBlock("reef_choices", buttons...)}
}

// choiceInbound is the message a press of one of reef's buttons stands for; false for any
// other interaction.
func choiceInbound(cb slackapi.InteractionCallback) (messages.Inbound, bool) {
	if cb.Type != slackapi.InteractionTypeBlockActions || cb.User.ID == "" || len(cb.ActionCallback.BlockActions) == 0 {
		return messages.Inbound{}, false
	}
	act := cb.ActionCallback.BlockActions[0]
	chat := cb.Channel.ID
	if chat == "" {
		chat = cb.Container.ChannelID
	}
	if !strings.HasPrefix(act.ActionID, choicePrefix) || act.Value == "" || chat == "" {
		return messages.Inbound{}, false
	}
	id := act.ActionTs
	if id == "" {
		id = cb.TriggerID
	}
	in := messages.Inbound{Channel: "slack", ChatID: chat, SenderID: cb.User.ID, SenderName: cb.User.Name,
		MessageID: "act-" + id, Text: act.Value, Mentioned: true, Time: time.Now()}
	switch {
	case strings.HasPrefix(chat, "D"):
		in.ChatType, in.ThreadID = messages.ChatDirect, cb.Container.ThreadTs
	default: // a channel: the conversation is the thread the buttons are in
		in.ChatType, in.ThreadID = messages.ChatThread, cb.Container.ThreadTs
		if in.ThreadID == "" {
			in.ThreadID = cb.Container.MessageTs
		}
	}
	return in, true
}

// onInteractive delivers a press of one of reef's buttons in its chat's order and
// acknowledges the envelope once reef accepted it; other interactions are acknowledged.
func (b *Bot) onInteractive(ctx context.Context, sm *socketmode.Client, ev socketmode.Event, order *chatOrder, deliver channels.Deliver) {
	if ev.Request == nil {
		return
	}
	id := ev.Request.EnvelopeID
	cb, ok := ev.Data.(slackapi.InteractionCallback)
	var in messages.Inbound
	if ok {
		in, ok = choiceInbound(cb)
	}
	if !ok {
		_ = sm.AckCtx(ctx, id, nil)
		return
	}
	order.run(in.ChatID, func() {
		if b.deliverOnce(ctx, in, deliver) == nil {
			_ = sm.AckCtx(ctx, id, nil)
		}
	})
}
