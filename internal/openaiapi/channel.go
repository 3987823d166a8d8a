package openaiapi

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Name is the channel's name: its Connector, its sessions' keys (agent:<id>:openai:direct:<name>).
const Name = access.APIChannel

// Channel is the API's side of the runtime: a channel like Telegram's, whose "platform" is
// the HTTP requests of Handler. A request hands its message to reef through the Connector's
// deliver, then waits for what the Connector sends to its chat: the reply (Send) and the
// run's end (Progress, TurnFinal with the run's usage).
//
// Each chat (one agent and session name) has at most one exchange at a time: a second
// request waits for the first. An exchange whose request went away (the client hung up or
// timed out) keeps its chat until its run ends or orphanTTL passes, so a late answer is
// never taken for the next request's.
type Channel struct {
	log zerolog.Logger

	mu      sync.Mutex
	deliver channels.Deliver     // while Run runs; nil otherwise
	running chan struct{}        // closed when Run starts; replaced when it ends
	chats   map[string]*exchange // chat id → its exchange
	web     *http.Client         // downloads images given by URL (media.go); nil: none
}

var (
	_ channels.Channel          = (*Channel)(nil)
	_ channels.ProgressRenderer = (*Channel)(nil)
)

// orphanTTL is how long an exchange nobody waits for any more keeps its chat.
const orphanTTL = 30 * time.Minute

// NewChannel returns the API's channel. It starts nothing.
func NewChannel(log zerolog.Logger) *Channel {
	return &Channel{log: log.With().Str("channel", Name).Logger(), running: make(chan struct{}), chats: map[string]*exchange{}}
}

// Run makes the channel accept requests until ctx ends.
func (c *Channel) Run(ctx context.Context, deliver channels.Deliver) error {
	c.mu.Lock()
	c.deliver = deliver
	close(c.running)
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	c.deliver = nil
	c.running = make(chan struct{})
	c.mu.Unlock()
	return nil
}

// Send hands a reply to the exchange of its chat. A reply with nobody waiting (a cron job's
// answer routed to an API session) has nowhere to go: the transcript keeps it.
func (c *Channel) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	ex := c.exchange(out.ChatID)
	if ex == nil {
		c.log.Debug().Str("session", out.SessionKey).Msg("reply with no request waiting; it stays in the transcript")
		return nil, nil
	}
	ex.offer(ctx, event{out: &out})
	return []string{ex.msgID}, nil
}

// Progress passes a run's end to the exchange of its chat, and ends the exchange.
func (c *Channel) Progress(ctx context.Context, ev messages.TurnEvent) {
	if ev.Kind != messages.TurnFinal {
		return
	}
	ex := c.exchange(ev.ChatID)
	if ex == nil {
		return
	}
	ex.offer(ctx, event{final: &ev})
	c.end(ev.ChatID, ex)
}

func (c *Channel) exchange(chat string) *exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chats[chat]
}

// errNotRunning: the gateway has not started the channel (or is stopping).
var errNotRunning = errors.New("the API channel is not running")

// startWait bounds how long a request waits for the channel to run (the gateway starting,
// or its Connector restarting) before it is refused.
const startWait = 10 * time.Second

// open starts an exchange on chat, waiting while another one holds it, and returns it with
// the deliver to hand the message to.
func (c *Channel) open(ctx context.Context, chat, msgID string) (*exchange, channels.Deliver, error) {
	notRunning := time.NewTimer(startWait)
	defer notRunning.Stop()
	for {
		c.mu.Lock()
		deliver, running := c.deliver, c.running
		held := c.chats[chat]
		if deliver != nil && held == nil {
			ex := newExchange(msgID)
			c.chats[chat] = ex
			c.mu.Unlock()
			return ex, deliver, nil
		}
		c.mu.Unlock()
		wait, limit := running, notRunning.C
		if deliver != nil {
			wait, limit = held.done, nil
		}
		select {
		case <-wait:
		case <-limit:
			return nil, nil, errNotRunning
		case <-ctx.Done():
			if deliver == nil {
				return nil, nil, errNotRunning
			}
			return nil, nil, ctx.Err()
		}
	}
}

// abandon is called when the request of ex stops waiting. If its message was never
// accepted, the chat is free at once; otherwise it stays held until the run ends or
// orphanTTL passes.
func (c *Channel) abandon(chat string, ex *exchange, accepted bool) {
	close(ex.gone)
	if !accepted {
		c.end(chat, ex)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.chats[chat] == ex {
		ex.orphan = time.AfterFunc(orphanTTL, func() { c.end(chat, ex) })
	}
}

// end frees chat if ex still holds it.
func (c *Channel) end(chat string, ex *exchange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.chats[chat] == ex {
		delete(c.chats, chat)
		close(ex.done)
		if ex.orphan != nil {
			ex.orphan.Stop()
		}
	}
}

// exchange is one request's message and what comes back for it.
type exchange struct {
	msgID  string
	events chan event    // replies, then the run's end
	gone   chan struct{} // closed when the request stopped waiting
	done   chan struct{} // closed when the chat is free again
	orphan *time.Timer   // frees the chat of an abandoned exchange; guarded by Channel.mu
}

// event is a reply or the run's end.
type event struct {
	out   *messages.Outbound
	final *messages.TurnEvent
}

func newExchange(msgID string) *exchange {
	return &exchange{msgID: msgID, events: make(chan event, 16), gone: make(chan struct{}), done: make(chan struct{})}
}

// offer hands ev to the waiting request, unless it went away or ctx ended.
func (ex *exchange) offer(ctx context.Context, ev event) {
	select {
	case ex.events <- ev:
	case <-ex.gone:
	case <-ctx.Done():
	}
}
