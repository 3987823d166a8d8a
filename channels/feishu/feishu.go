// Package feishu is the Feishu (Lark) channel: a bot account that receives im.message.receive_v1
// events, by the long-connection WebSocket (default) or by webhook, and answers through the IM
// REST API. It uses github.com/larksuite/oapi-sdk-go/v3 (v3.12.0: the first WebSocket client that
// stops when its context ends).
//
// Acknowledgement: an event is acknowledged to the platform only after deliver returned nil (the
// message is durably stored). A failed delivery answers the WebSocket frame with code 500, or the
// webhook with HTTP 500, so the platform redelivers; replays carry the same message_id, which
// reef's connector uses as its dedup key.
//
// Secrets: the app secret, the encrypt key and tenant access tokens never appear in an error
// or a log line. The SDK's log output is routed through a redacting adapter, and every error
// leaving this package is redacted.
//
// Concurrency: Run may be called again after it returned (the connector restarts it); each call
// builds its own WebSocket client or HTTP server. The SDK and the webhook server hand each
// event to its own goroutine; a chat's events then wait for their turn in chatOrder (order.go),
// whose drain goroutine per busy chat ends when the chat has nothing waiting. Send, Edit and
// Delete are safe for concurrent use.
package feishu

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
)

// Config configures a Bot.
type Config struct {
	AppID     string
	AppSecret string
	// Domain is "feishu" (https://open.feishu.cn, the default), "lark"
	// (https://open.larksuite.com), or a full base URL (tests, private deployments).
	Domain string
	// Mode is "websocket" (default: the long connection, no public URL needed) or "webhook".
	Mode string
	// VerificationToken and EncryptKey authenticate webhook callbacks; webhook mode needs at
	// least one of them. With EncryptKey set, bodies are AES-256-CBC encrypted and signed.
	VerificationToken string
	EncryptKey        string
	// WebhookListen is the address of the webhook server (e.g. 127.0.0.1:9000); WebhookPath
	// its path (default /feishu/events).
	WebhookListen string
	WebhookPath   string
	// BotName is the bot's display name, used to recognise its mention when the platform does
	// not report the bot's open_id (fetched from /open-apis/bot/v3/info at start).
	BotName string
	// HTTPClient is used for every REST call and the WebSocket endpoint discovery (default: a
	// client with a 30 s timeout).
	HTTPClient *http.Client
	// MediaClient fetches the https URLs of a reply's MEDIA: lines (the SSRF guard's client);
	// nil: such lines are refused with a note.
	MediaClient *http.Client
	// Gate, in a cluster, lets only the node that holds the app's inbound loop open the long
	// connection (channels.Gate, unit channels.InboundWork("feishu", Account)); nil: this
	// node does. Webhook mode accepts on every node.
	Gate    channels.Gate
	Account string
}

// Mode values.
const (
	ModeWebSocket = "websocket"
	ModeWebhook   = "webhook"
)

// DefaultWebhookPath is the default Config.WebhookPath.
const DefaultWebhookPath = "/feishu/events"

// Limit is the longest message Send creates, in runes. Feishu allows 30 KB of post content; 4000
// runes of any script stays well inside it after JSON escaping.
const Limit = 4000

// Bot is one Feishu/Lark bot account.
type Bot struct {
	cfg  Config
	base string // REST and WebSocket base URL
	log  zerolog.Logger
	red  *redactor
	http *http.Client
	sdk  *larkcore.Config // the SDK's client configuration (token cache, logger, HTTP client)
	im   *larkim.V1       // the im/v1 service: the only one reef uses

	mediaClient *http.Client // Config.MediaClient

	mu      sync.Mutex
	openID  string // the bot's own open_id, known after Run fetched bot info
	botName string
	hookURL string // the webhook's URL while its server listens

	// deliverTimeout bounds a webhook delivery (the platform wants an answer within 3 s).
	deliverTimeout time.Duration
	// maxRetryWait caps one rate-limit wait in Send.
	maxRetryWait time.Duration
	// order delivers each chat's events one at a time, in the platform's order.
	order *chatOrder
	// onReachable is set by OnReachable before Run.
	onReachable func()
}

var (
	_ channels.Channel   = (*Bot)(nil)
	_ channels.Editor    = (*Bot)(nil)
	_ channels.Deleter   = (*Bot)(nil)
	_ channels.Reachable = (*Bot)(nil)
	_ channels.EditPacer = (*Bot)(nil)
)

// EditLimits: Feishu lets an app update messages 50 times a second in all, and a message be
// edited 20 times.
func (b *Bot) EditLimits() channels.EditLimits {
	return channels.EditLimits{PerChat: time.Second, PerSecond: 40, PerMessage: 20}
}

// OnReachable registers fn, called when the long connection is (re)established, so that
// replies waiting for the platform go out at once. Call it before Run.
func (b *Bot) OnReachable(fn func()) { b.onReachable = fn }

func (b *Bot) reachable() {
	if b.onReachable != nil {
		b.onReachable()
	}
}

// New checks cfg and returns a Bot. It starts nothing and touches no network.
func New(cfg Config, log zerolog.Logger) (*Bot, error) {
	if cfg.AppID == "" || cfg.AppSecret == "" {
		return nil, errors.New("feishu: appId and appSecret are required")
	}
	base, err := BaseURL(cfg.Domain)
	if err != nil {
		return nil, err
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = ModeWebSocket
	case ModeWebSocket, ModeWebhook:
	default:
		return nil, fmt.Errorf("feishu: unknown mode %q (want websocket or webhook)", cfg.Mode)
	}
	if cfg.Mode == ModeWebhook {
		if cfg.VerificationToken == "" && cfg.EncryptKey == "" {
			return nil, errors.New("feishu: webhook mode needs verificationToken or encryptKey, or anyone could post events")
		}
		if cfg.WebhookListen == "" {
			return nil, errors.New("feishu: webhook mode needs webhookListen (e.g. 127.0.0.1:9000)")
		}
	}
	if cfg.WebhookPath == "" {
		cfg.WebhookPath = DefaultWebhookPath
	}
	if !strings.HasPrefix(cfg.WebhookPath, "/") {
		cfg.WebhookPath = "/" + cfg.WebhookPath
	}
	red := newRedactor(cfg.AppSecret, cfg.EncryptKey, cfg.VerificationToken)
	hc := spyClient(cfg.HTTPClient, red)
	b := &Bot{
		cfg: cfg, base: base, log: log, red: red, http: hc, botName: cfg.BotName, mediaClient: cfg.MediaClient,
		deliverTimeout: 2500 * time.Millisecond,
		maxRetryWait:   30 * time.Second,
		order:          newChatOrder(orderWindow),
	}
	// What lark.NewClient does, without the root package: it builds a client for every
	// Feishu service (megabytes of binary, BENCHMARKS.md) where reef needs only im/v1.
	b.sdk = &larkcore.Config{BaseUrl: base, AppId: cfg.AppID, AppSecret: cfg.AppSecret,
		EnableTokenCache: true, AppType: larkcore.AppTypeSelfBuilt, HttpClient: hc,
		Logger: &sdkLogger{log: log, red: red}, LogLevel: larkcore.LogLevelDebug}
	larkcore.NewLogger(b.sdk)
	larkcore.NewCache(b.sdk)
	larkcore.NewSerialization(b.sdk)
	larkcore.NewHttpClient(b.sdk)
	b.im = larkim.New(b.sdk)
	return b, nil
}

// The platform's base URLs.
const (
	FeishuBaseURL = "https://open.feishu.cn"
	LarkBaseURL   = "https://open.larksuite.com"
)

// BaseURL resolves Config.Domain to the platform's base URL.
func BaseURL(domain string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(domain)) {
	case "", "feishu":
		return FeishuBaseURL, nil
	case "lark", "larksuite":
		return LarkBaseURL, nil
	}
	if strings.HasPrefix(domain, "http://") || strings.HasPrefix(domain, "https://") {
		return strings.TrimRight(domain, "/"), nil
	}
	return "", fmt.Errorf("feishu: domain %q is not feishu, lark or an http(s) URL", domain)
}

// Endpoint returns the base URL the bot talks to (REST and WebSocket discovery).
func (b *Bot) Endpoint() string { return b.base }

// WebhookURL returns the URL of the webhook server while it listens, else "".
func (b *Bot) WebhookURL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hookURL
}

func (b *Bot) self() (openID, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.openID, b.botName
}
