// Package discord connects reef to Discord through a bot account, using discordgo for the
// gateway WebSocket and the REST API.
//
// Run owns the bot's gateway sessions, one per shard (shards.go). Each identifies with the
// GuildMessages, DirectMessages and MessageContent intents and its [shard_id, num_shards]
// (none with one shard), hands each MESSAGE_CREATE to reef in arrival order, and after a
// dropped socket reconnects and RESUMEs itself on READY's resume_gateway_url (discordgo's own
// reconnect loop is off, because it retries for ever, even after Discord closed the socket
// with a fatal close code such as 4004 or 4014; and it never uses resume_gateway_url). Events
// replayed after a RESUME keep their Discord message ids, so reef's dedup makes them
// harmless. A session that cannot be resumed — discordgo closes with code 1000 after a read
// error or missed heartbeat ACKs, which ends the session on Discord — is replaced: the
// RESUME is refused, discordgo identifies anew on the same socket, and the new READY makes
// the bot read the messages it missed over REST (session.go). Fatal close codes and a
// rejected token end Run with channels.ErrAuth; a gateway that stays unreachable ends Run
// with an error, and the caller restarts it (the next Run's READY reads the gap too).
//
// Concurrency: Run starts one goroutine per shard (and, in a cluster, one that keeps this
// node's share of the shards), and waits for them. A shard's handlers run on discordgo's read
// goroutine (SyncEvents) and only queue messages; one worker goroutine per shard normalises
// and delivers them, and after a gap one backfill goroutine reads the missed messages (the
// shard cancels and waits for it when it ends).
// The newest handled message id of each channel is saved in Config.StateFile. Send, Edit and Typing
// are safe for concurrent use; each REST call is bounded by its ctx, also while discordgo's
// rate limiter waits.
//
// Secrets: the token is sent only as the "Authorization: Bot <token>" header and in IDENTIFY;
// every error this package returns or logs has the token redacted.
package discord

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
)

// DefaultAPIBase is where Discord's REST API lives.
const DefaultAPIBase = "https://discord.com"

// Intents the bot asks for: guild and direct messages, with their content.
const Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages | discordgo.IntentsMessageContent

// Config configures a Bot.
type Config struct {
	Token      string       // bot token from the developer portal, with or without "Bot "
	APIBase    string       // default DefaultAPIBase; tests point it at discordtest
	HTTPClient *http.Client // default: a client with a 30 s timeout
	// StateFile keeps the newest message id of each channel the bot has handled, so that
	// after a restart it reads the messages sent while reef was down (Discord replays none
	// to a new session). Empty: kept in memory, for the gaps within one process only.
	StateFile string
	// State, in a cluster, keeps that checkpoint in the shared database instead, where the
	// node that takes a shard over reads it.
	State SharedState
	// MediaClient downloads attachments from the urls Discord gives and fetches a reply's
	// https MEDIA: urls: the SSRF guard's client. nil: neither is fetched.
	MediaClient *http.Client
	// Gate, in a cluster, lets only the node that holds the bot's inbound loop open the
	// gateway connection (channels.Gate); nil: this node connects. Every node sends.
	Gate    channels.Gate
	Account string // the account's name in reef.yaml ("": default), naming the loop's unit
	// Shards fixes the number of gateway shards; 0 runs as many as Discord recommends
	// (GET /gateway/bot), and again after Discord asks for more (shards.go).
	Shards int
}

// Bot is one Discord bot account.
type Bot struct {
	token  string // without "Bot "
	client *http.Client
	log    zerolog.Logger

	mediaClient *http.Client       // Config.MediaClient
	gate        channels.Gate      // Config.Gate
	account     string             // Config.Account
	rest        *discordgo.Session // REST only; Run opens its own session for the gateway

	reconnectWaits []time.Duration
	fixedShards    int           // Config.Shards
	idents         *identifies   // paces IDENTIFYs (shards.go)
	spreadEvery    time.Duration // how often a node checks its share of the shards
	stateFile      string
	state          SharedState
	checkpoint     *checkpoint                // loaded by the first Run
	onReachable    func()                     // set by OnReachable before Run
	onUnreachable  func(error, time.Duration) // set by OnUnreachable before Run
	delivered      delivered                  // parts of replies Discord has (delivered.go)

	mu       sync.Mutex
	selfID   string              // the bot's user id, from READY
	channels map[string]chanInfo // channel id → kind, for threads
	lastSeen map[string]string   // channel id → newest message id seen, for the backfill after a gap
	guildOf  map[string]string   // channel id → its guild ("" for a DM), as the gateway said: whose shard reads its gap
}

var _ channels.Channel = (*Bot)(nil)
var _ channels.Typer = (*Bot)(nil)
var _ channels.Editor = (*Bot)(nil)
var _ channels.Deleter = (*Bot)(nil)
var _ channels.Reactor = (*Bot)(nil)
var _ channels.ThreadTyper = (*Bot)(nil)
var _ channels.Reachable = (*Bot)(nil)
var _ channels.EditPacer = (*Bot)(nil)

// EditLimits: Discord's bucket for editing messages is 5 per 5 seconds per channel, and a bot
// makes at most 50 requests a second in all.
func (b *Bot) EditLimits() channels.EditLimits {
	return channels.EditLimits{PerChat: time.Second, PerSecond: 40}
}

// OnReachable registers fn, called when a gateway session starts or resumes, so that replies
// waiting for Discord go out at once. Call it before Run.
func (b *Bot) OnReachable(fn func()) { b.onReachable = fn }

func (b *Bot) reachable() {
	if b.onReachable != nil {
		b.onReachable()
	}
}

// OnUnreachable registers fn, called when the gateway connection drops, so that the channel
// shows as reconnecting until a session starts or resumes. Call it before Run.
func (b *Bot) OnUnreachable(fn func(error, time.Duration)) { b.onUnreachable = fn }

// errDropped is why a channel whose gateway connection dropped is reconnecting.
var errDropped = errors.New("the gateway connection dropped")

// New returns a Bot. It starts nothing and does not touch the network.
func New(cfg Config, log zerolog.Logger) (*Bot, error) {
	words := strings.Fields(cfg.Token)
	if len(words) > 0 && words[0] == "Bot" {
		words = words[1:]
	}
	if len(words) == 0 {
		return nil, errors.New("discord: no bot token: set the token from the Discord developer portal (Bot → Token)")
	}
	if len(words) > 1 {
		return nil, errors.New("discord: the bot token contains white space")
	}
	token := words[0]
	base := cfg.APIBase
	if base == "" {
		base = DefaultAPIBase
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("discord: api base %q is not an http(s) URL", base)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	if base != DefaultAPIBase {
		next := client.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		client.Transport = &rewrite{scheme: u.Scheme, host: u.Host, next: next}
	}
	b := &Bot{token: token, client: client, log: log, channels: map[string]chanInfo{}, lastSeen: map[string]string{}, reconnectWaits: defaultReconnectWaits,
		stateFile: cfg.StateFile, state: cfg.State, mediaClient: cfg.MediaClient, gate: cfg.Gate, account: cfg.Account,
		fixedShards: max(cfg.Shards, 0), idents: newIdentifies(), spreadEvery: spreadEvery, guildOf: map[string]string{}}
	b.rest = b.newSession(client)
	return b, nil
}

// newSession returns a discordgo session configured for reef: no logging of its own, no
// automatic reconnects or rate-limit sleeps (this package handles both, bounded by ctx),
// ordered event handlers and uncompressed JSON on the gateway.
func (b *Bot) newSession(client *http.Client) *discordgo.Session {
	s, _ := discordgo.New("Bot " + b.token) // New cannot fail
	s.Client = client
	s.LogLevel = -1
	s.StateEnabled = false
	s.SyncEvents = true
	s.ShouldReconnectOnError = false
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 1
	s.Compress = false
	s.Identify.Compress = false
	s.Identify.Intents = Intents
	return s
}

// rewrite sends requests meant for discord.com to another server (tests, proxies).
type rewrite struct {
	scheme, host string
	next         http.RoundTripper
}

func (r *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "discord.com" {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host, req.Host = r.scheme, r.host, ""
	}
	return r.next.RoundTrip(req)
}

// self returns the bot's user id once READY arrived.
func (b *Bot) self() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.selfID
}

func (b *Bot) setSelf(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.selfID = id
}

// safeError is an error whose text has the token redacted. Unwrap keeps the sentinels
// callers branch on (channels.ErrAuth, channels.ErrPermanent, context errors).
type safeError struct {
	msg  string
	kind []error
}

func (e *safeError) Error() string   { return e.msg }
func (e *safeError) Unwrap() []error { return e.kind }

// redact returns text without the token.
func (b *Bot) redact(text string) string {
	return strings.ReplaceAll(text, b.token, "[redacted]")
}

// errorf builds a safeError: the formatted text, redacted, wrapping kinds.
func (b *Bot) errorf(kinds []error, format string, args ...any) error {
	return &safeError{msg: b.redact(fmt.Sprintf(format, args...)), kind: kinds}
}
