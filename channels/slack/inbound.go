package slack

import (
	"context"
	"encoding/json"
	"html"
	"strconv"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// callback is the outer event of the Events API (payload of a Socket Mode envelope, body of
// an HTTP request).
type callback struct {
	Type      string `json:"type"` // event_callback | url_verification
	Challenge string `json:"challenge"`
	TeamID    string `json:"team_id"`
	EventID   string `json:"event_id"`
	Event     event  `json:"event"`
}

// event is the inner event: message or app_mention.
type event struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"` // im | mpim | channel | group
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
	ClientMsgID string `json:"client_msg_id"`
	Team        string `json:"team"`
	Files       []file `json:"files"`
}

// file is a file shared with a message.
type file struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Mimetype           string `json:"mimetype"`
	Size               int64  `json:"size"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
	Subtype            string `json:"subtype"`
}

// deliverAttempts is how often one message is offered to reef before it is left for Slack to
// redeliver (unacknowledged); the waits between them stay inside Slack's 3 s.
const deliverAttempts = 3

// intake hands one event callback to reef. It returns nil when the envelope may be
// acknowledged: the message is accepted, a duplicate, or not one reef handles.
func (b *Bot) intake(ctx context.Context, cb *callback, deliver channels.Deliver) error {
	if cb.Type != "event_callback" {
		return nil
	}
	in, ok := b.normalise(cb)
	if !ok {
		return nil
	}
	keys := dedupKeys(cb)
	if b.seen.any(keys) {
		return nil
	}
	if err := b.deliverOnce(ctx, in, deliver); err != nil {
		return err
	}
	b.seen.add(keys)
	b.rememberThread(in)
	return nil
}

// deliverOnce offers in to reef a few times, within Slack's 3 s, while reef cannot accept it.
func (b *Bot) deliverOnce(ctx context.Context, in messages.Inbound, deliver channels.Deliver) error {
	wait := 100 * time.Millisecond
	var err error
	for attempt := 1; attempt <= deliverAttempts; attempt++ {
		if err = deliver(ctx, in); err == nil {
			return nil
		}
		if ctx.Err() != nil || attempt == deliverAttempts {
			break
		}
		b.log.Warn().Err(err).Str("chat", in.ChatID).Int("attempt", attempt).Msg("slack: message not accepted; retrying")
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
	b.log.Warn().Err(err).Str("chat", in.ChatID).Str("message", in.MessageID).Msg("slack: message not accepted; left for Slack to redeliver")
	return err
}

// slashInbound is the message a slash command stands for: "/stop", "/new some text". Commands
// cannot be sent inside threads; in a channel one reaches the channel's own session.
func slashInbound(cmd slackapi.SlashCommand) (messages.Inbound, bool) {
	if cmd.Command == "" || cmd.UserID == "" || cmd.ChannelID == "" || cmd.TriggerID == "" {
		return messages.Inbound{}, false
	}
	in := messages.Inbound{Channel: "slack", ChatID: cmd.ChannelID, ChatType: messages.ChatGroup, SenderID: cmd.UserID,
		SenderName: cmd.UserName, MessageID: "cmd-" + cmd.TriggerID, Text: strings.TrimSpace(cmd.Command + " " + cmd.Text),
		Mentioned: true, Time: time.Now()}
	if strings.HasPrefix(cmd.ChannelID, "D") {
		in.ChatType = messages.ChatDirect
	}
	return in, true
}

// dedupKeys are what tells a redelivered or duplicated event: its event id (retries) and the
// client's message id (a client that sent the same message twice).
func dedupKeys(cb *callback) []string {
	var keys []string
	if cb.EventID != "" {
		keys = append(keys, "e:"+cb.EventID)
	}
	if id := cb.Event.ClientMsgID; id != "" {
		keys = append(keys, "c:"+cb.Event.Channel+":"+id)
	}
	return keys
}

// normalise turns a message or app_mention event into an Inbound. It reports false for what
// reef ignores: other events, edits and deletions, messages of bots (itself included), and
// empty messages.
func (b *Bot) normalise(cb *callback) (messages.Inbound, bool) {
	e := &cb.Event
	if e.Type != "message" && e.Type != "app_mention" {
		return messages.Inbound{}, false
	}
	switch e.Subtype {
	case "", "file_share", "thread_broadcast":
	default:
		return messages.Inbound{}, false
	}
	self := b.self()
	if e.User == "" || e.BotID != "" || e.User == self || e.Channel == "" || e.TS == "" {
		return messages.Inbound{}, false
	}
	mention := self != "" && strings.Contains(e.Text, "<@"+self+">")
	in := messages.Inbound{
		Channel:   "slack",
		Account:   "", // set by the connector
		ChatID:    e.Channel,
		SenderID:  e.User,
		MessageID: e.TS,
		Text:      plainText(e.Text, self),
		Time:      tsTime(e.TS),
		Media:     inboundMedia(e.Files),
		Mentioned: e.Type == "app_mention" || mention,
	}
	if in.Text == "" && len(in.Media) == 0 {
		return messages.Inbound{}, false
	}
	if e.ChannelType == "im" || (e.ChannelType == "" && strings.HasPrefix(e.Channel, "D")) {
		in.ChatType, in.Mentioned, in.ThreadID = messages.ChatDirect, true, e.ThreadTS
		return in, true
	}
	// In a channel, every conversation with the bot is a thread: the one the message belongs
	// to, or the one it starts.
	in.ChatType, in.ThreadID = messages.ChatThread, e.ThreadTS
	if in.ThreadID == "" {
		in.ThreadID = e.TS
	} else if b.inBotThread(e.Channel, e.ThreadTS) {
		in.Mentioned = true // a reply in a thread the bot answers in
	}
	return in, true
}

// plainText turns Slack's inbound mrkdwn into the text the agent reads: the bot's own
// mention removed, user mentions and links written plainly, entities unescaped.
func plainText(text, self string) string {
	if self != "" {
		text = strings.ReplaceAll(text, "<@"+self+">", "")
	}
	var out strings.Builder
	for {
		i := strings.IndexByte(text, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i:], '>')
		if j < 0 {
			break
		}
		out.WriteString(text[:i])
		inner := text[i+1 : i+j]
		target, label, hasLabel := strings.Cut(inner, "|")
		switch {
		case hasLabel && (strings.HasPrefix(target, "http") || strings.HasPrefix(target, "mailto:")):
			out.WriteString(label + " (" + target + ")")
		case hasLabel:
			out.WriteString(label)
		default:
			out.WriteString(strings.TrimPrefix(target, "mailto:"))
		}
		text = text[i+j+1:]
	}
	out.WriteString(text)
	return strings.TrimSpace(html.UnescapeString(out.String()))
}

// tsTime reads a Slack ts ("1700000000.000100") as a time.
func tsTime(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.Unix(s, us*1000)
}

// inboundMedia lists a message's files; Ref is the url_private download link, fetched with
// the bot token (Fetch).
func inboundMedia(files []file) []messages.Media {
	var out []messages.Media
	for _, f := range files {
		ref := f.URLPrivateDownload
		if ref == "" {
			ref = f.URLPrivate
		}
		if ref == "" {
			continue // a file the bot cannot see (file_access: check_file_info) or a tombstone
		}
		kind := messages.MediaDocument
		switch mt := f.Mimetype; {
		case strings.HasPrefix(mt, "image/") && mt != "image/svg+xml":
			kind = messages.MediaImage
		case strings.HasPrefix(mt, "audio/"):
			kind = messages.MediaAudio
			if f.Subtype == "slack_audio" {
				kind = messages.MediaVoice
			}
		case strings.HasPrefix(mt, "video/"):
			kind = messages.MediaVideo
		}
		out = append(out, messages.Media{Kind: kind, Name: f.Name, MIME: f.Mimetype, Size: f.Size, Ref: ref})
	}
	return out
}

// rememberThread notes a thread the bot takes part in, so that replies in it need no mention.
func (b *Bot) rememberThread(in messages.Inbound) {
	if in.ChatType == messages.ChatThread && in.Mentioned {
		b.seen.add([]string{"t:" + in.ChatID + ":" + in.ThreadID})
	}
}

func (b *Bot) inBotThread(channel, threadTS string) bool {
	return b.seen.any([]string{"t:" + channel + ":" + threadTS})
}

// recent is a bounded set of keys: when full, the older half is forgotten.
type recent struct {
	mu   sync.Mutex
	max  int
	cur  map[string]struct{}
	prev map[string]struct{}
}

func newRecent(max int) *recent {
	return &recent{max: max, cur: map[string]struct{}{}, prev: map[string]struct{}{}}
}

func (r *recent) any(keys []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		if _, ok := r.cur[k]; ok {
			return true
		}
		if _, ok := r.prev[k]; ok {
			return true
		}
	}
	return false
}

func (r *recent) add(keys []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		if len(r.cur) >= r.max/2 {
			r.prev, r.cur = r.cur, map[string]struct{}{}
		}
		r.cur[k] = struct{}{}
	}
}

// decodeCallback reads an event callback.
func decodeCallback(raw []byte) (*callback, error) {
	var cb callback
	if err := json.Unmarshal(raw, &cb); err != nil {
		return nil, err
	}
	return &cb, nil
}

// chatOrder runs each chat's work one at a time, in the order given, with a goroutine per
// busy chat; different chats run concurrently.
type chatOrder struct {
	mu   sync.Mutex
	busy map[string][]func()
	wg   sync.WaitGroup
}

func newChatOrder() *chatOrder { return &chatOrder{busy: map[string][]func(){}} }

func (o *chatOrder) run(chat string, fn func()) {
	o.mu.Lock()
	if q, ok := o.busy[chat]; ok {
		o.busy[chat] = append(q, fn)
		o.mu.Unlock()
		return
	}
	o.busy[chat] = nil
	o.wg.Add(1)
	o.mu.Unlock()
	go func() {
		defer o.wg.Done()
		for {
			fn()
			o.mu.Lock()
			q := o.busy[chat]
			if len(q) == 0 {
				delete(o.busy, chat)
				o.mu.Unlock()
				return
			}
			fn, o.busy[chat] = q[0], q[1:]
			o.mu.Unlock()
		}
	}()
}

// wait returns when every chat's work is done.
func (o *chatOrder) wait() { o.wg.Wait() }
