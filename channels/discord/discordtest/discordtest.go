// Package discordtest is a fake Discord for tests: the REST API under /api/v9 and the gateway
// WebSocket (HELLO, IDENTIFY, READY, heartbeats, dispatches, RESUME with replay), served on
// 127.0.0.1 so that discordgo runs unchanged against it. Attachments (files.go): AddFile
// serves a user's file from a CDN-like /attachments/ path; the bot's sends may be multipart
// (payload_json and files[n], 10 MiB each, 25 MiB a request; more is refused with 413 and
// code 40005 as Discord does), their files kept per message (Files). An enforced nonce is
// remembered for NonceWindow only (Discord: "the past few minutes"), as ExpireNonces shows.
//
// The fake keeps one active gateway session per shard (the latest IDENTIFY of that
// [shard_id, num_shards]); sharding is as strict as Discord's (shards.go). Every dispatch
// is recorded in that session's log with its sequence number, so a client that RESUMEs after
// a dropped socket gets every dispatch it missed, with the same message ids. As on Discord, a
// client that closes its socket with code 1000 or 1001 ends its session: its next RESUME is
// answered with op 9 (it must IDENTIFY), and what was dispatched while it had no session is
// never replayed (GET /channels/{id}/messages still has it). READY carries a
// resume_gateway_url: a second listener serving the same gateway, which records the RESUMEs
// that reach it. Messages the bot sends through REST are recorded per channel (see Sent) and,
// like on Discord, dispatched back to the bot as MESSAGE_CREATE; it can edit and delete them.
// The fake records the allowed_mentions of each send and edit, and where typing was shown.
//
// A Server also implements channeltest.Platform.
package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
)

// Defaults of Config.
const (
	DefaultToken   = "fake-bot-token"
	DefaultBotID   = "900"
	DefaultBotName = "reef-bot"
)

// Intents a reef bot must ask for.
const (
	IntentGuildMessages  = 1 << 9
	IntentDirectMessages = 1 << 12
	IntentMessageContent = 1 << 15
)

// Config configures a fake Discord. The zero value works.
type Config struct {
	Token   string // the bot token the fake accepts (without "Bot "); default DefaultToken
	BotID   string // the bot's user id; default DefaultBotID
	BotName string
	// HeartbeatInterval sent in HELLO; default 200ms so tests stay fast.
	HeartbeatInterval time.Duration
	// DisallowedIntents makes IDENTIFY fail with close code 4014 when it asks for any of
	// these intents, as Discord does for a privileged intent not enabled in the portal.
	DisallowedIntents int
	// NonceWindow is how long an enforced nonce is remembered: Discord checks its
	// uniqueness only "in the past few minutes". Default DefaultNonceWindow; ExpireNonces
	// ends the window at once.
	NonceWindow time.Duration

	// Sharding (shards.go). Shards is the count GET /gateway/bot recommends and the least
	// an IDENTIFY must use (default 1: no shard array needed). MaxConcurrency is
	// session_start_limit.max_concurrency (default 1). IdentifyWindow is how long a rate
	// limit bucket stays used after an IDENTIFY: default DefaultIdentifyWindow with several
	// shards, none (not enforced) with one, as the tests of one shard reconnect faster;
	// negative: never enforced.
	Shards         int
	MaxConcurrency int
	IdentifyWindow time.Duration
	// SessionStarts is session_start_limit.total: IDENTIFYs allowed until the reset (0: not
	// counted). SessionStartsRemaining and SessionStartsReset (the time until the counter
	// refills; default 24h) set where the day stands: without either, all are left.
	SessionStarts          int
	SessionStartsRemaining int
	SessionStartsReset     time.Duration
}

// DefaultNonceWindow is how long the fake remembers an enforced nonce by default.
const DefaultNonceWindow = 5 * time.Minute

// Server is a running fake Discord.
type Server struct {
	URL       string // http://127.0.0.1:port, the API base to give the bot
	WSURL     string // ws://127.0.0.1:port/gateway-ws, returned by GET /gateway
	ResumeURL string // ws://127.0.0.1:port2, READY's resume_gateway_url (a second listener)

	cfg    Config
	http   *httptest.Server
	resume *httptest.Server

	mu        sync.Mutex
	nextID    int64
	channels  map[string]Channel
	messages  map[string]*Message // by message id
	sent      map[string][]string // channel id → ids of the messages the bot sent, in order
	edits     map[string][]string // message id → texts it was edited to
	first     map[string]string   // message id → the text it was sent with
	mentions  map[string][]string // message id → allowed_mentions (raw JSON, "" if none) of its send, then of each edit
	typing    map[string]int
	reactions map[string][]string  // message id → the bot's reactions, in order
	history   int                  // GET /channels/{id}/messages answered
	nonces    map[string]nonceMark // channel + enforced nonce → the message it created, and when
	requests  []string
	failures  map[string][]failure
	files     map[string][]byte            // attachment name → content (files.go)
	uploads   map[string]map[string][]byte // message id → files the bot attached
	downloads int

	gw gateway
}

// Channel is a channel the fake knows about.
type Channel struct {
	ID       string `json:"id"`
	Type     int    `json:"type"` // 0 guild text, 1 DM, 11 public thread...
	GuildID  string `json:"guild_id,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
}

// Channel types.
const (
	TypeGuildText     = 0
	TypeDM            = 1
	TypePublicThread  = 11
	TypePrivateThread = 12
)

type failure struct {
	status     int
	retryAfter time.Duration
	after      int // requests to let through first (FailAfter)
}

// nonceMark is a message an enforced nonce created.
type nonceMark struct {
	id string
	at time.Time
}

// New starts a fake Discord that stops when the test ends.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := Start(cfg)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake Discord on 127.0.0.1 outside of a test (reef-bench runs it this way).
// The caller stops it with Close.
func Start(cfg Config) *Server {
	if cfg.Token == "" {
		cfg.Token = DefaultToken
	}
	if cfg.BotID == "" {
		cfg.BotID = DefaultBotID
	}
	if cfg.BotName == "" {
		cfg.BotName = DefaultBotName
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 200 * time.Millisecond
	}
	if cfg.NonceWindow <= 0 {
		cfg.NonceWindow = DefaultNonceWindow
	}
	s := &Server{
		cfg:       cfg,
		nextID:    1_000_000,
		channels:  map[string]Channel{},
		messages:  map[string]*Message{},
		sent:      map[string][]string{},
		edits:     map[string][]string{},
		first:     map[string]string{},
		mentions:  map[string][]string{},
		nonces:    map[string]nonceMark{},
		typing:    map[string]int{},
		reactions: map[string][]string{},
		failures:  map[string][]failure{},
	}
	s.gw.init(s)
	mux := http.NewServeMux()
	s.routes(mux)
	mux.HandleFunc("GET /attachments/{channel}/{name}", s.serveAttachment)
	mux.HandleFunc("GET /gateway-ws", s.gw.serve)
	mux.HandleFunc("GET /gateway-ws/", s.gw.serve) // discordgo adds a slash
	s.http = httptest.NewServer(mux)
	s.resume = httptest.NewServer(mux)
	s.URL = s.http.URL
	s.WSURL = "ws" + strings.TrimPrefix(s.http.URL, "http") + "/gateway-ws"
	s.ResumeURL = "ws" + strings.TrimPrefix(s.resume.URL, "http")
	return s
}

// Close stops the server and drops every gateway connection.
func (s *Server) Close() {
	s.Drop()
	for _, h := range []*httptest.Server{s.http, s.resume} {
		h.CloseClientConnections()
		h.Close()
	}
}

// Token is the bot token the fake accepts.
func (s *Server) Token() string { return s.cfg.Token }

// BotID is the bot's user id.
func (s *Server) BotID() string { return s.cfg.BotID }

// FailNext makes the next request to route (one of the Route constants) fail with status.
// A 429 carries retryAfter in its body and headers. Calls queue up.
func (s *Server) FailNext(route string, status int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], failure{status: status, retryAfter: retryAfter})
}

// FailAfter lets after requests to route succeed, then fails the next one like FailNext.
func (s *Server) FailAfter(route string, after, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], failure{status: status, after: after})
}

// ExpireNonces ends the nonce window now: Discord no longer remembers the nonces of the
// messages sent so far, and a send with one of them creates a new message.
func (s *Server) ExpireNonces() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.nonces)
}

// AddChannel makes a channel known to GET /channels/{id}.
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[c.ID] = c
}

// Sent returns the texts the bot sent to channelID and did not delete, in order, as they are
// now (after edits).
func (s *Server) Sent(channelID string) []string {
	var out []string
	for _, m := range s.SentMessages(channelID) {
		if !m.Deleted {
			out = append(out, m.Content)
		}
	}
	return out
}

// AllowedMentions returns the allowed_mentions (raw JSON; "" when the request had none) of
// the request that sent message id, then of each edit of it.
func (s *Server) AllowedMentions(messageID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.mentions[messageID]...)
}

// SentMessages returns the messages the bot sent to channelID, in order, deleted ones too.
func (s *Server) SentMessages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, id := range s.sent[channelID] {
		out = append(out, *s.messages[id])
	}
	return out
}

// Edits returns the texts message id was edited to, in order.
func (s *Server) Edits(messageID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.edits[messageID]...)
}

// History returns every text message id showed: as sent, then each edit's.
func (s *Server) History(messageID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{s.first[messageID]}, s.edits[messageID]...)
}

// Reactions returns the emoji the bot reacted with to messageID, in order.
func (s *Server) Reactions(messageID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reactions[messageID]...)
}

// Typing returns how many typing indicators the bot started in channelID.
func (s *Server) Typing(channelID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typing[channelID]
}

// Deleted returns the ids of the messages the bot deleted in channelID, in send order.
func (s *Server) Deleted(channelID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.sent[channelID] {
		if s.messages[id].Deleted {
			out = append(out, id)
		}
	}
	return out
}

// HistoryReads returns how often the bot read a channel's messages (GET /channels/{id}/messages).
func (s *Server) HistoryReads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.history
}

// Requests returns "METHOD /path" of every REST request, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Limit is Discord's message length limit: 2000 characters (code points).
func (s *Server) Limit() (int, channels.Measure) { return 2000, channels.Runes }

// Redelivers is false: Discord does not re-send an event the bot did not handle.
func (s *Server) Redelivers() bool { return false }

// newID returns a fresh snowflake-like id. Callers hold s.mu.
func (s *Server) newID() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError writes a Discord JSON error.
func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

// writeFailure writes a failure queued by FailNext.
func writeFailure(w http.ResponseWriter, f failure) {
	switch f.status {
	case http.StatusTooManyRequests:
		secs := f.retryAfter.Seconds()
		w.Header().Set("Retry-After", strconv.Itoa(int(f.retryAfter.Round(time.Second)/time.Second)))
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
		writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false})
	case http.StatusForbidden:
		apiError(w, 403, 50001, "Missing Access")
	case http.StatusNotFound:
		apiError(w, 404, 10003, "Unknown Channel")
	case http.StatusUnauthorized:
		apiError(w, 401, 0, "401: Unauthorized")
	case http.StatusRequestEntityTooLarge:
		apiError(w, 413, 40005, "Request entity too large")
	default:
		apiError(w, f.status, 0, fmt.Sprintf("%d: %s", f.status, http.StatusText(f.status)))
	}
}
