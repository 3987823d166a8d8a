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
	var resumeURL string // READY's resume_gateway_url; written on the read goroutine, read under s's events
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
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { b.reachable() })
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
		if !q.push(m.Message) {
			b.log.Error().Str("message", m.ID).Msg("discord: too many messages waiting for reef; dropped one")
		}
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		if b.onUnreachable != nil && ctx.Err() == nil {
			b.onUnreachable(errDropped, 0)
		}
		select {
		case disconnected <- struct{}{}:
		default:
		}
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
			if err := b.reconnect(ctx, s, sh, conns, url, &identified); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// reconnect reopens the gateway connection of s, which RESUMEs its session: on resumeURL
// (READY's resume_gateway_url), and on the gateway itself every other attempt should that
// fail. When Discord refuses the RESUME, discordgo identifies on a new session, whose READY
// starts the backfill (session.go).
func (b *Bot) reconnect(ctx context.Context, s *discordgo.Session, sh shard, conns *connTracker, resumeURL string, identified *atomic.Bool) error {
	defer conns.target.set("")
	var last error
	for i, wait := range b.reconnectWaits {
		if i%2 == 0 {
			conns.target.set(resumeURL)
		} else {
			conns.target.set("")
		}
		s.Dialer = conns.dialer()
		if wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait/2 + rand.N(wait/2+1)):
			}
		}
		identDone := func() {}
		if !identified.Load() { // no session yet: this attempt IDENTIFYs
			done, err := b.idents.wait(ctx, sh.id, b)
			if err != nil {
				return err
			}
			identDone = done
		}
		err := b.open(ctx, s, conns)
		identDone()
		if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
			b.log.Info().Int("attempt", i+1).Msg("discord: reconnected to the gateway")
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = b.openError(err)
		if errors.Is(last, channels.ErrAuth) || errors.Is(last, errReshard) {
			return last
		}
		b.log.Warn().Err(last).Int("attempt", i+1).Msg("discord: reconnect failed")
	}
	return b.errorf(nil, "discord: gateway: gave up reconnecting after %d attempts: %v", len(b.reconnectWaits), last)
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
