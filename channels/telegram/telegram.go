// Package telegram is reef's Telegram channel, built on telego over net/http.
//
// Run receives updates by long polling (getUpdates driven here, so the offset advances only
// past updates that deliver accepted durably: an update deliver refused is fetched and
// delivered again) or by webhook (answered 200 only after deliver accepted the update, so
// Telegram redelivers otherwise). Send renders the Markdown a model writes as Telegram HTML,
// chunked to 4096 UTF-16 units, falling back to plain text when Telegram cannot parse it.
//
// The bot token is part of every Bot API URL. It never reaches an error or a log line:
// every error from the HTTP client passes through redaction before telego or reef sees it.
//
// Concurrency: Run is called by one goroutine at a time; Send, Edit and Typing may be called
// from many goroutines at once, also while Run runs.
package telegram

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mymmrac/telego"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
)

// Config configures one Telegram bot account.
type Config struct {
	Token   string // from @BotFather: "<bot id>:<35 characters>"
	APIRoot string // Bot API server; default https://api.telegram.org
	Mode    string // "polling" (default) or "webhook"
	// Webhook mode: the public HTTPS URL Telegram posts to, the secret Telegram sends in
	// X-Telegram-Bot-Api-Secret-Token (1–256 of A-Z a-z 0-9 _ -), and the local address the
	// webhook HTTP server listens on (e.g. 127.0.0.1:8443 behind a TLS reverse proxy).
	WebhookURL    string
	WebhookSecret string
	WebhookListen string
	PollTimeout   time.Duration // long-polling timeout; default 30 s
	HTTPClient    *http.Client  // default: a new http.Client; its Timeout must exceed PollTimeout
	Account       string        // copied into Inbound.Account
	// MediaClient fetches the https URLs of a reply's MEDIA: lines (the SSRF guard's client);
	// nil: such lines are refused with a note.
	MediaClient *http.Client
	// Gate, in a cluster, lets only the node that holds the bot's inbound loop poll
	// (channels.Gate); nil: this node polls. Webhook mode accepts on every node.
	Gate channels.Gate
}

// Modes of receiving updates.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// DefaultAPIRoot is the public Bot API server.
const DefaultAPIRoot = "https://api.telegram.org"

// MaxWebhookBody is the largest webhook request body accepted.
const MaxWebhookBody = 1 << 20

// tokenShaped reports whether s looks like a bot token: digits, ':', then 35 of [A-Za-z0-9_-].
// (Plain code, not a regexp: compiling `{35}` and `{1,256}` at package init slowed every
// start; BENCHMARKS.md.)
func tokenShaped(s string) bool {
	id, rest, ok := strings.Cut(s, ":")
	return ok && id != "" && strings.Trim(id, "0123456789") == "" && len(rest) == 35 && tokenChars(rest)
}

// secretShaped reports whether s is a valid webhook secret token: 1 to 256 of [A-Za-z0-9_-].
func secretShaped(s string) bool { return len(s) >= 1 && len(s) <= 256 && tokenChars(s) }

func tokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Bot is one Telegram bot account.
type Bot struct {
	cfg    Config
	log    zerolog.Logger
	api    *telego.Bot
	client *http.Client                // the Bot API's, also for file downloads
	self   atomic.Pointer[telego.User] // from getMe, for mention detection

	offset      atomic.Int64                                        // next getUpdates offset; kept across Run restarts
	reachable   atomic.Pointer[func()]                              // OnReachable's function
	unreachable atomic.Pointer[func(err error, wait time.Duration)] // OnUnreachable's function
	timing      timing

	progressMu sync.Mutex
	progress   map[string]*sendProgress // outbox key → chunks already sent (see Send)

	webhookAddr chan string // receives the bound webhook address (tests)
}

// timing holds the waits of Run; tests shorten them.
type timing struct {
	retryMin, retryMax time.Duration // after a failed poll or a refused deliver
	conflictWait       time.Duration // after 409 Conflict, before Run returns
	maxPollFailures    int           // consecutive failed polls before Run returns
	callTimeout        time.Duration // bound of one Bot API call other than getUpdates
}

var (
	_ channels.Channel     = (*Bot)(nil)
	_ channels.BatchRunner = (*Bot)(nil)
	_ channels.Typer       = (*Bot)(nil)
	_ channels.Editor      = (*Bot)(nil)
	_ channels.Reachable   = (*Bot)(nil)
	_ channels.Deleter     = (*Bot)(nil)
	_ channels.Reactor     = (*Bot)(nil)
	_ channels.EditPacer   = (*Bot)(nil)
)

// EditLimits: Telegram answers 429 when a chat's messages are edited more than about once a
// second, and when a bot sends more than about 30 messages a second across its chats.
func (b *Bot) EditLimits() channels.EditLimits {
	return channels.EditLimits{PerChat: time.Second, PerSecond: 25}
}

// New validates cfg and returns a Bot. It starts nothing and makes no request.
func New(cfg Config, log zerolog.Logger) (*Bot, error) {
	if cfg.Token == "" {
		return nil, errors.New("telegram: the bot token is empty (get one from @BotFather)")
	}
	if !tokenShaped(cfg.Token) {
		return nil, errors.New("telegram: the bot token does not look like <bot id>:<35 characters> (get one from @BotFather)")
	}
	if cfg.APIRoot == "" {
		cfg.APIRoot = DefaultAPIRoot
	}
	if u, err := url.Parse(cfg.APIRoot); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telegram: apiRoot %q is not an http(s) URL", cfg.APIRoot)
	}
	if cfg.Mode == "" {
		cfg.Mode = ModePolling
	}
	if err := validateMode(&cfg); err != nil {
		return nil, err
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 30 * time.Second
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	if client.Timeout > 0 && client.Timeout <= cfg.PollTimeout {
		return nil, fmt.Errorf("telegram: the HTTP client's timeout (%v) must exceed the poll timeout (%v)", client.Timeout, cfg.PollTimeout)
	}
	api, err := telego.NewBot(cfg.Token,
		telego.WithAPIServer(cfg.APIRoot),
		telego.WithAPICaller(redactingCaller{client: client, token: cfg.Token}),
		telego.WithRequestConstructor(stdJSONConstructor{}),
		telego.WithDiscardLogger())
	if err != nil {
		return nil, fmt.Errorf("telegram: %s", redact(err.Error(), cfg.Token))
	}
	return &Bot{
		cfg:    cfg,
		log:    log,
		api:    api,
		client: client,
		timing: timing{
			retryMin: 500 * time.Millisecond, retryMax: 30 * time.Second,
			conflictWait: 10 * time.Second, maxPollFailures: 5, callTimeout: time.Minute,
		},
		progress:    map[string]*sendProgress{},
		webhookAddr: make(chan string, 1),
	}, nil
}

func validateMode(cfg *Config) error {
	switch cfg.Mode {
	case ModePolling:
		return nil
	case ModeWebhook:
	default:
		return fmt.Errorf("telegram: mode %q is neither %q nor %q", cfg.Mode, ModePolling, ModeWebhook)
	}
	if u, err := url.Parse(cfg.WebhookURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("telegram: webhook mode needs webhookUrl, the public https:// URL Telegram posts to")
	}
	if !secretShaped(cfg.WebhookSecret) {
		return errors.New("telegram: webhook mode needs webhookSecret: 1–256 characters of A-Z, a-z, 0-9, _ and -")
	}
	if cfg.WebhookListen == "" {
		return errors.New("telegram: webhook mode needs webhookListen, the local address to serve on (e.g. 127.0.0.1:8443)")
	}
	return nil
}

// defaultHTTPClient keeps its connections to the Bot API: replies to many chats go out at
// once, and with net/http's defaults (2 idle, no cap) nearly every sendMessage dialed a new
// connection and closed it (a large share of the gateway's CPU with many chats at once;
// BENCHMARKS.md).
// Calls beyond the cap wait for a connection instead of dialing one.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxConnsPerHost = 64
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t}
}

// OnReachable sets the function called after every getUpdates answer (channels.Reachable).
func (b *Bot) OnReachable(fn func()) { b.reachable.Store(&fn) }

// OnUnreachable sets the function called after a getUpdates that failed and is tried again
// (channels.Unreachable).
func (b *Bot) OnUnreachable(fn func(err error, wait time.Duration)) { b.unreachable.Store(&fn) }

func (b *Bot) callReachable() {
	if fn := b.reachable.Load(); fn != nil && *fn != nil {
		(*fn)()
	}
}
