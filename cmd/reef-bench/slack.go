package main

import (
	"strconv"
	"strings"

	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// startSlack starts a fake Slack whose sends count like the fake Telegram's: the burst then
// comes in as Slack DMs over Socket Mode ("D<chat>"), and the replies go out by the Web API.
func (r *benchRig) startSlack() {
	r.sl = slacktest.Start(slacktest.Config{OnSend: r.onSlackSend})
}

// onSlackSend records a message the bot posted or updated on Slack as onSend does Telegram's:
// the chat is the number after "D", the message its ts without the dot.
func (r *benchRig) onSlackSend(channel, ts, text string) {
	chat, err := strconv.ParseInt(strings.TrimPrefix(channel, "D"), 10, 64)
	if err != nil {
		return
	}
	id, _ := strconv.Atoi(strings.ReplaceAll(ts, ".", ""))
	r.onSend(telegramtest.SentMessage{ChatID: chat, MessageID: id, Text: text})
}
