// Package slack connects reef to Slack through an app's bot user, using
// github.com/slack-go/slack for the Web API and its socketmode package for Socket Mode.
//
// Connection: Socket Mode by default (an app-level token xapp-…, no public URL): Run opens
// the WebSocket with apps.connections.open and follows Slack's disconnect envelopes
// (refresh_requested, link_disabled, warning, …) by opening a new one, as socketmode does. The
// other mode is the Events API over HTTP (mode "events"): Handler verifies the signing secret
// (X-Slack-Signature, X-Slack-Request-Timestamp within five minutes), answers url_verification
// and acknowledges each event within Slack's 3 s.
//
// Acknowledgement: an envelope (Socket Mode) or an event request (HTTP) is acknowledged only
// after deliver returned nil, that is once the message is in reef's durable inbox. A message
// not accepted is left unacknowledged, so Slack redelivers it (retry_attempt, X-Slack-Retry-Num);
// a retry, the app_mention and message events of one message, and a client's duplicate
// (client_msg_id) carry the same message or are dropped here, and reef's dedup of the message
// ts keeps the rest harmless.
//
// Conversations: DMs (channel_type im) are direct chats; in channels the bot answers where
// it is mentioned (app_mention, or any message when the access rules do not require a mention).
// A top-level channel message starts a thread under itself; a message in a thread belongs to
// it: either way the Inbound's ThreadID is the thread's ts, so the thread is its own session
// and the reply goes into it.
//
// Concurrency: Run may be called again after it returned (the connector restarts it). One
// goroutine reads socketmode's events; each chat's messages are delivered in order by a
// goroutine per busy chat (order.go). Send, Edit, Delete, React and Typing are safe for
// concurrent use.
//
// Secrets: the bot token, the app token and the signing secret never appear in a log line or
// an error: slack-go's own logging goes through a redacting adapter, and every error leaving
// this package is redacted.
package slack

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	slackapi "github.com/slack-go/slack"

	"github.com/reefgw/reef/channels"
)

// DefaultAPIURL is where Slack's Web API lives.
const DefaultAPIURL = "https://slack.com/api/"

// Modes.
const (
	ModeSocket = "socket"
	ModeEvents = "events"
)

// DefaultEventsPath is the default path of the Events API endpoint.
const DefaultEventsPath = "/slack/events"

// Config configures a Bot.
type Config struct {
	BotToken      string // xoxb-…: every Web API call
	AppToken      string // xapp-…: Socket Mode (apps.connections.open)
	SigningSecret string // Events API mode: verifies each request
	Mode          string // socket (default) | events
	// EventsListen is the local address of the Events API endpoint (events mode); empty:
	// reef's web listener serves it (WebEndpoint). EventsPath is its path (default
	// DefaultEventsPath).
	EventsListen string
	EventsPath   string
	// APIURL is the Web API's base (default DefaultAPIURL); tests point it at slacktest.
	APIURL string
	// Account is the configured account name, for logs.
	Account string
	// HTTPClient makes the Web API calls (default: a client with a 30 s timeout).
	HTTPClient *http.Client
	// Buttons: the app has Interactivity on, so a reply's choices (an exec approval's
	// /approve, /deny) show as buttons whose presses come back over Socket Mode (choices.go).
	Buttons bool
	// MediaClient downloads url_private files and fetches a reply's https MEDIA: urls: the
	// SSRF guard's client. nil: neither is fetched.
	MediaClient *http.Client
}

// Bot is one Slack app's bot user.
type Bot struct {
	cfg         Config
	api         *slackapi.Client
	apiURL      *url.URL
	log         zerolog.Logger
	mediaClient *http.Client

	maxRetryWait   time.Duration // longest wait for a 429's Retry-After
	deliverTimeout time.Duration // how long an HTTP event waits for reef (Slack wants 3 s)
	pingInterval   time.Duration // socketmode's dead-man timer

	onReachable   func()
	onUnreachable func(error, time.Duration)

	mu      sync.Mutex
	selfID  string // the bot's user id (auth.test)
	teamID  string
	hookURL string // the events endpoint's URL while it listens
	seen    *recent
	maybe   maybeSent  // stored replies whose Send ended without a clear answer (once.go)
	web     *webIntake // set while Run lends WebEndpoint its deliver
	// webOrder orders the deliveries of WebEndpoint.
	webOrder *chatOrder
}

var (
	_ channels.Channel     = (*Bot)(nil)
	_ channels.Editor      = (*Bot)(nil)
	_ channels.Deleter     = (*Bot)(nil)
	_ channels.Reactor     = (*Bot)(nil)
	_ channels.Typer       = (*Bot)(nil)
	_ channels.ThreadTyper = (*Bot)(nil)
	_ channels.Reachable   = (*Bot)(nil)
	_ channels.Unreachable = (*Bot)(nil)
	_ channels.EditPacer   = (*Bot)(nil)
	_ channels.Fetcher     = (*Bot)(nil)
	_ channels.ShowDelayer = (*Bot)(nil)
)

// New checks cfg and returns a Bot. It starts nothing and touches no network.
func New(cfg Config, log zerolog.Logger) (*Bot, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("slack: no bot token: set botToken (xoxb-…) from the app's OAuth & Permissions page")
	}
	if !strings.HasPrefix(cfg.BotToken, "xoxb-") {
		return nil, errors.New("slack: the bot token must start with xoxb- (the Bot User OAuth Token)")
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeSocket
	case ModeSocket, ModeEvents:
	default:
		return nil, fmt.Errorf("slack: unknown mode %q (want socket or events)", cfg.Mode)
	}
	if cfg.Mode == ModeSocket && !strings.HasPrefix(cfg.AppToken, "xapp-") {
		return nil, errors.New("slack: Socket Mode needs an app-level token (xapp-…, Basic Information → App-Level Tokens, scope connections:write)")
	}
	if cfg.Mode == ModeEvents {
		if cfg.SigningSecret == "" {
			return nil, errors.New("slack: events mode needs signingSecret (Basic Information → App Credentials), or anyone could post events")
		}
	}
	if cfg.Mode == ModeEvents {
		cfg.Buttons = false // presses would go to an interactivity Request URL reef does not serve
	}
	if cfg.EventsPath == "" {
		cfg.EventsPath = DefaultEventsPath
	}
	if !strings.HasPrefix(cfg.EventsPath, "/") {
		cfg.EventsPath = "/" + cfg.EventsPath
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	u, err := url.Parse(cfg.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("slack: api url %q is not an http(s) URL", cfg.APIURL)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	b := &Bot{cfg: cfg, apiURL: u, log: log, mediaClient: cfg.MediaClient,
		maxRetryWait: 30 * time.Second, deliverTimeout: 2500 * time.Millisecond, pingInterval: 30 * time.Second,
		seen: newRecent(10_000), webOrder: newChatOrder()}
	opts := []slackapi.Option{slackapi.OptionAPIURL(cfg.APIURL), slackapi.OptionHTTPClient(hc),
		slackapi.OptionLog(&sdkLog{b: b})}
	if cfg.AppToken != "" {
		opts = append(opts, slackapi.OptionAppLevelToken(cfg.AppToken))
	}
	b.api = slackapi.New(cfg.BotToken, opts...)
	return b, nil
}

// EditLimits: chat.update is in Slack's Tier 3 (about 50 a minute per method and workspace),
// and a channel takes about one message a second.
func (b *Bot) EditLimits() channels.EditLimits {
	return channels.EditLimits{PerChat: 1500 * time.Millisecond, PerSecond: 0.8}
}

// ShowAfter is how long a run goes on before Slack shows it: its "…" draft costs a
// chat.update for the answer (Tier 3, shared by the workspace), so only runs that last get
// one; a quicker answer is one chat.postMessage.
const ShowAfter = 2 * time.Second

// ShowDelay implements channels.ShowDelayer.
func (b *Bot) ShowDelay() time.Duration { return ShowAfter }

// OnReachable registers fn, called when a Socket Mode connection opens, so that replies
// waiting for Slack go out at once. Call it before Run.
func (b *Bot) OnReachable(fn func()) { b.onReachable = fn }

// OnUnreachable registers fn, called when opening a Socket Mode connection failed. Call it
// before Run.
func (b *Bot) OnUnreachable(fn func(error, time.Duration)) { b.onUnreachable = fn }

func (b *Bot) reachable() {
	if b.onReachable != nil {
		b.onReachable()
	}
}

func (b *Bot) unreachable(err error, wait time.Duration) {
	if b.onUnreachable != nil {
		b.onUnreachable(err, wait)
	}
}

// Mode is the configured connection mode.
func (b *Bot) Mode() string { return b.cfg.Mode }

// EventsURL returns the Events API endpoint's URL while it listens, else "".
func (b *Bot) EventsURL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hookURL
}

func (b *Bot) self() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.selfID
}

// redact removes the tokens and the signing secret from text.
func (b *Bot) redact(text string) string {
	for _, s := range []string{b.cfg.BotToken, b.cfg.AppToken, b.cfg.SigningSecret} {
		if s != "" {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return text
}

// safeError is an error whose text is redacted; Unwrap keeps the sentinels callers branch on.
type safeError struct {
	msg  string
	kind []error
}

func (e *safeError) Error() string   { return e.msg }
func (e *safeError) Unwrap() []error { return e.kind }

// errorf builds a safeError: the formatted text, redacted, wrapping kinds.
func (b *Bot) errorf(kinds []error, format string, args ...any) error {
	return &safeError{msg: b.redact(fmt.Sprintf(format, args...)), kind: kinds}
}

// sdkLog routes slack-go's log output to zerolog at debug level, redacted.
type sdkLog struct{ b *Bot }

func (l *sdkLog) Output(_ int, s string) error {
	l.b.log.Debug().Str("sdk", "slack-go").Msg(l.b.redact(strings.TrimSpace(s)))
	return nil
}
