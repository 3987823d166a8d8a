// Package webchat is the channel behind the gateway's WebChat page: the browser posts a
// message (Post), reef delivers it like any platform message (access, queue modes, commands,
// durable intake), and the replies and progress lines go out to the pages watching
// (Subscribe), for the HTTP layer (internal/web) to stream.
//
// Every conversation is the owner's: whoever holds the gateway token. The owner may keep
// several (Message.Chat, a chat id such as "owner" or "c3f9..."): each chat id is also the
// sender id, so each is a session of its own (agent:<id>:webchat:direct:<chat>). Its history
// is the transcript, so a reloaded page or a restarted gateway shows it again; a reply sent
// while no page watches is not lost, only not streamed.
//
// Files the owner uploads (Upload) wait in Config.UploadDir until reef fetches them into the
// agent's workspace through the channels' media path (Fetch), with its limits.
//
// Concurrency: a Channel is safe for concurrent use. Publishing never waits for a watcher: a
// watcher whose buffer is full loses the event (the page reloads the history at the end of
// each run).
package webchat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Name is the channel's name; ChatID (also its SenderID) is the first conversation's.
const (
	Name     = "webchat"
	ChatID   = "owner"
	SenderID = "owner"
)

// DefaultMaxText is the longest message Post accepts, in bytes (the gateway's inbound default).
const DefaultMaxText = 32 << 10

// Errors Post returns for input the caller should refuse with a 4xx.
var (
	ErrEmpty      = errors.New("webchat: the message is empty")
	ErrTooLong    = errors.New("webchat: the message is too long")
	ErrNotRunning = errors.New("webchat: the channel is not running")
	ErrBadChat    = errors.New("webchat: not a chat id")
)

// Event kinds a watcher receives.
const (
	EventStarted  = "started"  // a run began
	EventProgress = "progress" // a progress line: a tool started (Text: its label)
	EventToolFail = "tool_error"
	EventQueued   = "queued" // a message waits by the queue mode (Text: what happens to it)
	EventReply    = "reply"  // a reply (Text), Failed when the run failed
	EventFinal    = "final"  // the run ended
)

// Event is what a watching page is sent.
type Event struct {
	Kind    string `json:"kind"`
	Text    string `json:"text,omitempty"`
	Failed  bool   `json:"failed,omitempty"`
	Session string `json:"session,omitempty"`
	Chat    string `json:"chat,omitempty"` // the conversation's chat id
}

// Config configures a Channel.
type Config struct {
	MaxText  int    // default DefaultMaxText
	UserName string // the sender name the agent sees; default "owner"
	// UploadDir keeps uploaded files until reef fetches them; "" refuses uploads.
	UploadDir string
	// MaxFile is the largest file Upload takes, per kind (the media limits); nil: 20 MB.
	MaxFile func(messages.MediaKind) int64
}

// Channel is the WebChat channel.
type Channel struct {
	cfg     Config
	mu      sync.Mutex
	deliver channels.Deliver
	watch   map[chan Event]struct{}
	session map[string]string // chat id → the conversation's session key, once reef named it
	next    atomic.Int64
	prefix  string
}

var (
	_ channels.Channel          = (*Channel)(nil)
	_ channels.ProgressRenderer = (*Channel)(nil)
)

// New returns a Channel. It starts nothing.
func New(cfg Config) *Channel {
	if cfg.MaxText <= 0 {
		cfg.MaxText = DefaultMaxText
	}
	if cfg.UserName == "" {
		cfg.UserName = "owner"
	}
	return &Channel{cfg: cfg, watch: map[chan Event]struct{}{}, session: map[string]string{}, prefix: fmt.Sprintf("%x", time.Now().UnixNano())}
}

// Run keeps deliver for Post until ctx ends.
func (c *Channel) Run(ctx context.Context, deliver channels.Deliver) error {
	c.mu.Lock()
	c.deliver = deliver
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.deliver = nil
	c.mu.Unlock()
	return nil
}

// Message is what the owner posts into a conversation.
type Message struct {
	Chat  string // the chat id; "" is ChatID
	Text  string
	Media []messages.Media // from Upload
}

// Post hands the owner's message to reef and returns once it is durably accepted.
func (c *Channel) Post(ctx context.Context, m Message) error {
	c.mu.Lock()
	deliver := c.deliver
	c.mu.Unlock()
	if deliver == nil {
		return ErrNotRunning
	}
	if m.Chat == "" {
		m.Chat = ChatID
	}
	if !ValidChat(m.Chat) {
		return ErrBadChat
	}
	text := strings.ReplaceAll(strings.ToValidUTF8(m.Text, "\uFFFD"), "\x00", "")
	if strings.TrimSpace(text) == "" && len(m.Media) == 0 {
		return ErrEmpty
	}
	if len(text) > c.cfg.MaxText {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLong, len(text), c.cfg.MaxText)
	}
	return deliver(ctx, messages.Inbound{
		ChatID: m.Chat, ChatType: messages.ChatDirect, SenderID: m.Chat, SenderName: c.cfg.UserName,
		MessageID: fmt.Sprintf("%s-%d", c.prefix, c.next.Add(1)), Text: text, Media: m.Media, Time: time.Now(),
	})
}

// Send shows a reply to the watching pages. It never fails: the transcript holds the reply
// for pages that open later.
func (c *Channel) Send(_ context.Context, out messages.Outbound) ([]string, error) {
	c.publish(Event{Kind: EventReply, Text: out.Text, Failed: out.Failed, Session: out.SessionKey, Chat: out.ChatID})
	return []string{fmt.Sprintf("%s-r%d", c.prefix, c.next.Add(1))}, nil
}

// Progress turns a run's progress into events for the watching pages.
func (c *Channel) Progress(_ context.Context, ev messages.TurnEvent) {
	e := Event{Session: ev.SessionKey, Chat: ev.ChatID}
	switch ev.Kind {
	case messages.TurnStarted:
		e.Kind = EventStarted
	case messages.ToolStarted:
		e.Kind, e.Text = EventProgress, ev.Label
	case messages.ToolFinished:
		if !ev.IsError {
			return
		}
		e.Kind, e.Text = EventToolFail, ev.Label
	case messages.MessageQueued:
		e.Kind, e.Text = EventQueued, ev.Label
	case messages.TurnFinal:
		e.Kind, e.Failed = EventFinal, ev.IsError
	default:
		return // interim text reaches the page as streamed text (the run events)
	}
	c.publish(e)
}

// SessionKey is the session key of the conversation chat once a run or reply named it, else "".
func (c *Channel) SessionKey(chat string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session[chat]
}

// Subscribe returns a channel of events for one watching page and a function that ends the
// subscription (and closes the channel).
func (c *Channel) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, 64)
	c.mu.Lock()
	c.watch[ch] = struct{}{}
	c.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			c.mu.Lock()
			delete(c.watch, ch)
			c.mu.Unlock()
			close(ch)
		})
	}
}

func (c *Channel) publish(e Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.Session != "" && e.Chat != "" {
		c.session[e.Chat] = e.Session
	}
	for ch := range c.watch {
		select {
		case ch <- e:
		default: // a slow page loses it; it reloads the history when the run ends
		}
	}
}
