package discord

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// maxQueued bounds the messages waiting for delivery; beyond it new ones are dropped (logged).
const maxQueued = 1000

// deliverAttempts is how often one message is offered to reef before it is dropped: Discord
// does not redeliver, so a short storage hiccup must not lose it.
const deliverAttempts = 6

// inbox is the ordered queue between discordgo's read goroutine and the delivery worker.
// While a gap is read over REST (hold), new messages wait behind it (held).
type inbox struct {
	mu      sync.Mutex
	items   []*discordgo.Message
	holding int // gaps being read
	held    []*discordgo.Message
	closed  bool
	wake    chan struct{}
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

// push queues m without blocking; it reports false when the queue is full.
func (q *inbox) push(m *discordgo.Message) bool {
	q.mu.Lock()
	if len(q.items)+len(q.held) >= maxQueued {
		q.mu.Unlock()
		return false
	}
	if q.holding > 0 {
		q.held = append(q.held, m)
	} else {
		q.items = append(q.items, m)
	}
	q.mu.Unlock()
	q.signal()
	return true
}

// hold makes later pushes wait until the gap being read is released.
func (q *inbox) hold() {
	q.mu.Lock()
	q.holding++
	q.mu.Unlock()
}

// release queues the messages read for a gap, then (the last gap read) those held meanwhile.
func (q *inbox) release(found []*discordgo.Message) {
	q.mu.Lock()
	q.items = append(q.items, found...)
	if q.holding--; q.holding == 0 {
		q.items = append(q.items, q.held...)
		q.held = nil
	}
	q.mu.Unlock()
	q.signal()
}

func (q *inbox) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close makes pop report false once the queue is empty.
func (q *inbox) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop waits for the next message; false when ctx ended or the queue is closed and empty.
func (q *inbox) pop(ctx context.Context) (*discordgo.Message, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			m := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return m, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.wake:
		}
	}
}

// deliverLoop normalises and delivers queued messages, one at a time, in order.
func (b *Bot) deliverLoop(ctx context.Context, q *inbox, deliver channels.Deliver) {
	for {
		m, ok := q.pop(ctx)
		if !ok {
			return
		}
		if in, ok := b.normalise(ctx, m); ok && !b.deliver(ctx, deliver, in) {
			continue // not handled: the checkpoint stays before it
		}
		if err := b.checkpoint.handled(m.ChannelID, m.GuildID, m.ID); err != nil {
			b.log.Warn().Err(err).Msg("discord: the newest handled message ids were not saved")
		}
	}
}

// deliver offers in to reef, retrying with backoff while reef cannot accept it. It reports
// whether reef accepted it.
func (b *Bot) deliver(ctx context.Context, deliver channels.Deliver, in messages.Inbound) bool {
	wait := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := deliver(ctx, in)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if attempt == deliverAttempts {
			b.log.Error().Err(err).Str("chat", in.ChatID).Str("message", in.MessageID).Msg("discord: message not accepted; dropped")
			return false
		}
		b.log.Warn().Err(err).Str("chat", in.ChatID).Int("attempt", attempt).Msg("discord: message not accepted; retrying")
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}

// normalise turns a MESSAGE_CREATE into an Inbound. It reports false for messages reef
// ignores: from bots (itself included) and webhooks, system messages, and empty text.
func (b *Bot) normalise(ctx context.Context, m *discordgo.Message) (messages.Inbound, bool) {
	self := b.self()
	if m.Author == nil || m.Author.Bot || m.WebhookID != "" || m.Author.ID == self {
		return messages.Inbound{}, false
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return messages.Inbound{}, false
	}
	in := messages.Inbound{
		Channel:    "discord",
		ChatID:     m.ChannelID,
		ChatType:   messages.ChatGroup,
		SenderID:   m.Author.ID,
		SenderName: m.Author.DisplayName(),
		MessageID:  m.ID,
		Text:       stripMention(m.Content, self),
		Time:       m.Timestamp,
	}
	in.Media = inboundMedia(m) // downloaded before the run (package media)
	if in.Text == "" && len(in.Media) == 0 {
		if m.Content == "" && len(m.Attachments) == 0 && m.GuildID != "" {
			b.log.Debug().Str("message", m.ID).Msg("discord: a guild message without content: is the Message Content intent enabled?")
		}
		return messages.Inbound{}, false
	}
	if m.GuildID == "" {
		in.ChatType, in.Mentioned = messages.ChatDirect, true
	} else if info := b.channelInfo(ctx, m.ChannelID); info.thread {
		in.ChatType, in.ThreadID = messages.ChatThread, m.ChannelID
		if info.parentID != "" {
			in.ChatID = info.parentID
		}
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == self {
			in.Mentioned = true
		}
	}
	if ref := m.ReferencedMessage; ref != nil {
		in.ReplyTo = ref.Content
		if ref.Author != nil && ref.Author.ID == self {
			in.Mentioned = true
		}
	}
	return in, true
}

// stripMention removes the bot's own mention tokens (<@id>, <@!id>) from text.
func stripMention(text, self string) string {
	if self != "" {
		for _, tok := range []string{"<@" + self + ">", "<@!" + self + ">"} {
			text = strings.ReplaceAll(text, tok+" ", "")
			text = strings.ReplaceAll(text, tok, "")
		}
	}
	return strings.TrimSpace(text)
}

// chanInfo is what normalisation needs to know about a guild channel.
type chanInfo struct {
	thread   bool
	parentID string
}

// maxCachedChannels bounds the channel cache; it is emptied when full.
const maxCachedChannels = 10_000

// channelInfo tells whether a guild channel is a thread, asking Discord once per channel.
// When Discord cannot say, the channel is taken for a plain one (and asked again next time).
func (b *Bot) channelInfo(ctx context.Context, id string) chanInfo {
	b.mu.Lock()
	info, ok := b.channels[id]
	b.mu.Unlock()
	if ok {
		return info
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := call(ctx, b, func(opts ...discordgo.RequestOption) (*discordgo.Channel, error) {
		return b.rest.Channel(id, opts...)
	})
	if err != nil {
		b.log.Warn().Err(b.apiError("channel", err)).Str("channel", id).Msg("discord: cannot look up channel; taking it for a text channel")
		return chanInfo{}
	}
	info = chanInfo{thread: c.IsThread(), parentID: c.ParentID}
	b.mu.Lock()
	if len(b.channels) >= maxCachedChannels {
		clear(b.channels)
	}
	b.channels[id] = info
	b.mu.Unlock()
	return info
}
