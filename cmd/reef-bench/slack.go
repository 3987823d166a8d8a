package main

import (
	"strconv"
	"strings"
	"sync"

	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// startSlack starts a fake Slack whose sends count like the fake Telegram's: the burst then
// comes in as Slack DMs over Socket Mode ("D<chat>"), and the replies go out by the Web API.
func (r *benchRig) startSlack() {
	r.slShown = &slackShown{texts: map[benchWhere][]string{}}
	r.sl = slacktest.Start(slacktest.Config{OnSend: r.onSlackSend})
}

// slackShown is every text each bot message on the fake Slack showed (posted, then each
// update), for the audit of delivered replies (touchedReplies).
type slackShown struct {
	mu    sync.Mutex
	texts map[benchWhere][]string
}

// onSlackSend records a message the bot posted or updated on Slack as onSend does Telegram's:
// the chat is the number after "D", the message its ts without the dot.
func (r *benchRig) onSlackSend(channel, ts, text string) {
	chat, err := strconv.ParseInt(strings.TrimPrefix(channel, "D"), 10, 64)
	if err != nil {
		return
	}
	id, _ := strconv.Atoi(strings.ReplaceAll(ts, ".", ""))
	r.slShown.mu.Lock()
	w := benchWhere{chat, id}
	r.slShown.texts[w] = append(r.slShown.texts[w], text)
	r.slShown.mu.Unlock()
	r.onSend(telegramtest.SentMessage{ChatID: chat, MessageID: id, Text: text})
}

// messages are the bot's messages in chat as the fake Telegram reports them, or, on Slack,
// the fake Slack's in the same form.
func (r *benchRig) messages(chat int64) []telegramtest.SentMessage {
	if r.sl == nil {
		return r.tg.Messages(chat)
	}
	var out []telegramtest.SentMessage
	for _, m := range r.sl.Messages("D" + strconv.FormatInt(chat, 10)) {
		if !m.Bot {
			continue
		}
		id, _ := strconv.Atoi(strings.ReplaceAll(m.TS, ".", ""))
		r.slShown.mu.Lock()
		shown := append([]string(nil), r.slShown.texts[benchWhere{chat, id}]...)
		r.slShown.mu.Unlock()
		sm := telegramtest.SentMessage{MessageID: id, ChatID: chat, Text: m.Text, Edits: m.Edits, Deleted: m.Deleted, History: shown}
		if m.Deleted {
			sm.DeleteCalls = 1
		}
		out = append(out, sm)
	}
	return out
}
