// Package fake is an in-process channel for tests and benchmarks: Inject plays a person
// sending a message (through the same Deliver path a platform adapter uses) and every reply
// and progress event is recorded and published on Go channels.
package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Channel is a fake platform account.
type Channel struct {
	// Sent receives every reply, Events every progress event. Both are buffered; a test that
	// does not read them is not blocked until the buffer (4096) fills.
	Sent   chan messages.Outbound
	Events chan messages.TurnEvent
	// SendErr, when set, makes Send fail with it (transient platform failure).
	SendErr atomic.Pointer[error]

	mu      sync.Mutex
	deliver channels.DeliverAll // nil while no Run goes on (before, between restarts)
	ready   chan struct{}       // closed while deliver is set
	runs    int                 // Runs begun: the latest owns deliver
	nextID  atomic.Int64
	prefix  string // makes message ids unique across Channel instances (restarts)
}

var (
	_ channels.Channel          = (*Channel)(nil)
	_ channels.BatchRunner      = (*Channel)(nil)
	_ channels.ProgressRenderer = (*Channel)(nil)
)

// New returns a fake channel.
func New() *Channel {
	return &Channel{
		Sent:   make(chan messages.Outbound, 4096),
		Events: make(chan messages.TurnEvent, 4096),
		ready:  make(chan struct{}),
		prefix: fmt.Sprintf("%x", time.Now().UnixNano()),
	}
}

// Run records deliver and waits for ctx.
func (c *Channel) Run(ctx context.Context, deliver channels.Deliver) error {
	return c.RunBatches(ctx, channels.Concurrently(deliver))
}

// RunBatches records deliver and waits for ctx.
func (c *Channel) RunBatches(ctx context.Context, deliver channels.DeliverAll) error {
	c.mu.Lock()
	c.runs++
	run := c.runs
	if c.deliver == nil {
		close(c.ready)
	}
	c.deliver = deliver
	c.mu.Unlock()
	<-ctx.Done()
	c.mu.Lock()
	if c.runs == run { // not taken over by a newer Run (a restarted Connector)
		c.deliver, c.ready = nil, make(chan struct{})
	}
	c.mu.Unlock()
	return nil
}

// Inject delivers a message as the platform would and returns once reef accepted it durably.
// Empty ChatType means a direct chat; empty MessageID gets a unique one.
func (c *Channel) Inject(ctx context.Context, in messages.Inbound) error {
	errs, err := c.InjectBatch(ctx, []messages.Inbound{in})
	if err != nil {
		return err
	}
	return errs[0]
}

// InjectBatch delivers messages as one platform batch (a Telegram getUpdates answer) and
// returns each one's error once reef accepted the batch, with Inject's defaults.
func (c *Channel) InjectBatch(ctx context.Context, ins []messages.Inbound) ([]error, error) {
	var deliver channels.DeliverAll
	for deliver == nil {
		c.mu.Lock()
		var ready chan struct{}
		deliver, ready = c.deliver, c.ready
		c.mu.Unlock()
		if deliver != nil {
			break
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ins = slices.Clone(ins)
	for i := range ins {
		in := &ins[i]
		if in.ChatType == "" {
			in.ChatType = messages.ChatDirect
		}
		if in.SenderID == "" {
			in.SenderID = in.ChatID
		}
		if in.MessageID == "" {
			in.MessageID = fmt.Sprintf("%s-m%d", c.prefix, c.nextID.Add(1))
		}
	}
	return deliver(ctx, ins), nil
}

// Send records a reply.
func (c *Channel) Send(_ context.Context, out messages.Outbound) ([]string, error) {
	if err := c.SendErr.Load(); err != nil && *err != nil {
		return nil, *err
	}
	c.Sent <- out
	return []string{fmt.Sprintf("p%d", c.nextID.Add(1))}, nil
}

// Progress records a progress event.
func (c *Channel) Progress(_ context.Context, ev messages.TurnEvent) {
	select {
	case c.Events <- ev:
	default:
	}
}
