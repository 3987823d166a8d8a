package discord

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/reefgw/reef/channels"
)

// openTimeout bounds one connection attempt (gateway URL, dial, HELLO, READY or RESUMED).
const openTimeout = 30 * time.Second

// drainTimeout is how long Run, failing, lets queued messages reach reef before it returns.
const drainTimeout = 10 * time.Second

// defaultReconnectWaits are the pauses before each attempt to resume a dropped gateway session;
// after the last failure Run returns an error and its caller starts a fresh session.
var defaultReconnectWaits = []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2 * time.Second, 4 * time.Second, 8 * time.Second}

// runShard runs the gateway session of one shard until ctx ends (nil), or it fails: an
// error wrapping channels.ErrAuth for a fatal close code, errReshard for 4011, another when
// the session was lost and could not be resumed.
func (b *Bot) runShard(ctx context.Context, sh shard, deliver channels.Deliver) error {
	conns := &connTracker{run: ctx, target: newResumeTarget()}
	client := *b.client
	client.Transport = &boundTransport{ctx: ctx, next: transportOf(b.client)}
	s := b.newSession(&client)
	s.ShardID, s.ShardCount = sh.id, sh.count
	s.Dialer = conns.dialer()
	var identified atomic.Bool // a READY came: reconnecting RESUMEs rather than IDENTIFYs

	q := newInbox()
	workCtx, stopWork := context.WithCancel(ctx)
	fillCtx, stopFills := context.WithCancel(ctx)
	var fills sync.WaitGroup // backfill goroutines, one per gap
	disconnected := make(chan struct{}, 1)
	settled := make(chan struct{}, 1) // a READY or RESUMED: the connection attempt succeeded
	var resumeURL string              // READY's resume_gateway_url; written on the read goroutine, read under s's events
	var resumeMu sync.Mutex
	s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		identified.Store(true)
		if r.User != nil {
			b.setSelf(r.User.ID)
		}
		if last := b.served(sh); len(last) > 0 { // a new session: what came meanwhile was not replayed
			q.hold()
			fills.Go(func() { b.backfill(fillCtx, q, last) })
		}
		b.reachable()
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) {
		signal(settled)
		signal(settled)
		b.reachable()
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.Event) {
		if u := readyURL(e); u != "" {
			resumeMu.Lock()
			resumeURL = u
			resumeMu.Unlock()
		}
	})
	s.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Message == nil {
			return
		}
		b.seen(m.Message)
		b.noteGuild(m.Message)
		if err := b.checkpoint.arrived(m.ChannelID, m.GuildID, m.ID); err != nil {
			b.log.Warn().Err(err).Msg("discord: a new channel's first message is not in the saved state")
		}
		if !q.push(m.Message) {
			b.log.Error().Str("message", m.ID).Msg("discord: too many messages waiting for reef; dropped one")
		}
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		if b.onUnreachable != nil && ctx.Err() == nil {
			b.onUnreachable(errDropped, 0)
		}
		signal(disconnected)
	})

	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		b.deliverLoop(workCtx, q, deliver)
	}()
	defer func() {
		s.Close()
		stopFills()
		fills.Wait()
		q.close()
		select {
		case <-workDone:
		case <-time.After(drainTimeout):
		}
		stopWork()
		<-workDone
	}()

	identDone, err := b.idents.wait(ctx, sh.id, b)
	if err != nil {
		return nil
	}
	err = b.open(ctx, s, conns)
	identDone()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return b.openError(err)
	}
	b.log.Info().Int("shard", sh.id).Int("shards", sh.count).Msg("discord: connected to the gateway")
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-disconnected:
			resumeMu.Lock()
			url := resumeURL
			resumeMu.Unlock()
			at := &attempt{s: s, sh: sh, conns: conns, identified: &identified, settled: settled, disconnected: disconnected}
			if err := b.reconnect(ctx, at, url); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// attempt is what reconnect needs of a shard's session: the discordgo session, whether it
// has had a READY (else an attempt IDENTIFYs), and the signals of its handlers.
type attempt struct {
	s            *discordgo.Session
	sh           shard
	conns        *connTracker
	identified   *atomic.Bool
	settled      chan struct{} // a READY or RESUMED
	disconnected chan struct{}
}

// errClosedBeforeReady is a reconnect attempt whose socket closed before READY or RESUMED:
// discordgo answers a refused RESUME by identifying on the same socket and reports success,
// so a close that follows (a fatal code, a rate limit) is seen only as a disconnect.
var errClosedBeforeReady = errors.New("the gateway closed the connection before READY or RESUMED")

// reconnect reopens the gateway connection of a shard's session, which RESUMEs it: on
// resumeURL (READY's resume_gateway_url), and on the gateway itself every other attempt
// should that fail. When Discord refuses the RESUME, discordgo identifies on a new session,
// whose READY starts the backfill (session.go). An attempt succeeds with READY or RESUMED.
func (b *Bot) reconnect(ctx context.Context, at *attempt, resumeURL string) error {
	conns := at.conns
	defer conns.target.set("")
	var last error
	for i, wait := range b.reconnectWaits {
		if i%2 == 0 {
			conns.target.set(resumeURL)
		} else {
			conns.target.set("")
		}
		at.s.Dialer = conns.dialer()
		if wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait/2 + rand.N(wait/2+1)):
			}
		}
		identDone := func() {}
		if !at.identified.Load() { // no session yet: this attempt IDENTIFYs
			done, err := b.idents.wait(ctx, at.sh.id, b)
			if err != nil {
				return err
			}
			identDone = done
		}
		drain(at.settled)
		drain(at.disconnected)
		err := b.open(ctx, at.s, conns)
		switch {
		case err == nil:
			err = b.settle(ctx, at)
		case errors.Is(err, discordgo.ErrWSAlreadyOpen):
			err = nil
		}
		identDone()
		if err == nil {
			b.log.Info().Int("attempt", i+1).Int("shard", at.sh.id).Msg("discord: reconnected to the gateway")
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = err
		if !errors.Is(err, errClosedBeforeReady) {
			last = b.openError(err)
		}
		if errors.Is(last, channels.ErrAuth) || errors.Is(last, errReshard) {
			return last
		}
		b.log.Warn().Err(last).Int("attempt", i+1).Int("shard", at.sh.id).Msg("discord: reconnect failed")
	}
	return b.errorf(nil, "discord: gateway: gave up reconnecting after %d attempts: %v", len(b.reconnectWaits), last)
}

// settle waits after an Open that reported success for the READY or RESUMED that makes it
// one. A READY slower than openTimeout (Discord holding the IDENTIFY) counts as success, as
// Open's did.
func (b *Bot) settle(ctx context.Context, at *attempt) error {
	timer := time.NewTimer(openTimeout)
	defer timer.Stop()
	select {
	case <-at.settled:
		return nil
	case <-at.disconnected:
		return errClosedBeforeReady
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// signal sets a one-slot flag channel.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// drain clears a one-slot flag channel.
func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// open runs s.Open bounded by ctx and openTimeout: when either ends, it closes the socket
// under discordgo, so that Open returns.
func (b *Bot) open(ctx context.Context, s *discordgo.Session, conns *connTracker) error {
	done := make(chan error, 1)
	go func() { done <- s.Open() }()
	timer := time.NewTimer(openTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	case <-timer.C:
	}
	conns.closeAll()
	err := <-done
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("no answer within %v: %w", openTimeout, err)
}

// openError explains why the gateway refused a connection; fatal close codes wrap
// channels.ErrAuth.
func (b *Bot) openError(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Code == 4011 {
			return b.errorf([]error{errReshard}, "discord: gateway closed the connection with 4011: sharding required")
		}
		if why, fatal := fatalClose(ce.Code); fatal {
			return b.errorf([]error{channels.ErrAuth}, "discord: gateway closed the connection with %d: %s", ce.Code, why)
		}
		return b.errorf(nil, "discord: gateway closed the connection with %d (%s)", ce.Code, ce.Text)
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) {
		return b.apiError("get gateway", err)
	}
	return b.errorf(nil, "discord: gateway: %v", err)
}

// fatalClose explains the gateway close codes after which reconnecting cannot help.
func fatalClose(code int) (string, bool) {
	switch code {
	case 4004:
		return "authentication failed: Discord rejected the bot token; copy it again from the developer portal (Bot → Reset Token)", true
	case 4010:
		return "invalid shard", true
	case 4011:
		return "sharding required: the bot is in too many guilds for one connection", true
	case 4012:
		return "invalid API version", true
	case 4013:
		return "invalid intents", true
	case 4014:
		return "disallowed intents: enable the Message Content intent for this bot in the Discord developer portal (Bot → Privileged Gateway Intents)", true
	}
	return "", false
}

// connTracker remembers the gateway's network connections, so that a connection attempt
// stuck inside discordgo can be ended by closing its socket.
type connTracker struct {
	run    context.Context
	target *resumeTarget
	mu     sync.Mutex
	conns  map[net.Conn]bool
}

// dialer is the WebSocket dialer of the next connection attempt.
func (t *connTracker) dialer() *websocket.Dialer {
	d := &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 15 * time.Second, NetDialContext: t.dial}
	if name := t.target.serverName(); name != "" {
		d.TLSClientConfig = &tls.Config{ServerName: name}
	}
	return d
}

func (t *connTracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(t.run, cancel)
	defer stop()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, t.target.addr(addr))
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conns == nil {
		t.conns = map[net.Conn]bool{}
	}
	tc := &trackedConn{Conn: c, t: t}
	t.conns[tc] = true
	return tc, nil
}

func (t *connTracker) closeAll() {
	t.mu.Lock()
	conns := make([]net.Conn, 0, len(t.conns))
	for c := range t.conns {
		conns = append(conns, c)
	}
	t.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

type trackedConn struct {
	net.Conn
	t *connTracker
}

func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	delete(c.t.conns, c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

// boundTransport ties requests made without a context (discordgo fetching the gateway URL
// inside Open) to Run's ctx.
type boundTransport struct {
	ctx  context.Context
	next http.RoundTripper
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Context().Done() == nil {
		req = req.WithContext(t.ctx)
	}
	return t.next.RoundTrip(req)
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}
