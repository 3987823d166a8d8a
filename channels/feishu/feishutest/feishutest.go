// Package feishutest is a fake Feishu/Lark open platform on 127.0.0.1 for tests. It speaks the
// real wire protocols, so the official SDK runs unchanged against it:
//
//   - REST: POST /open-apis/auth/v3/tenant_access_token/internal (checks app id and secret),
//     GET /open-apis/bot/v3/info, POST /open-apis/im/v1/messages?receive_id_type=chat_id,
//     POST /open-apis/im/v1/messages/{id}/reply, PUT|PATCH /open-apis/im/v1/messages/{id}
//     (bearer token checked, uuid idempotency honoured, 30 KB post / 150 KB text limits);
//     files (files.go): GET /open-apis/im/v1/messages/{id}/resources/{key}?type= for what users
//     send (UserSendsImage, UserSendsFile, UserSendsAudio), POST /open-apis/im/v1/images and
//     /open-apis/im/v1/files multipart uploads (10 MB / 30 MB), image and file messages.
//   - Long connection: POST /callback/ws/endpoint hands out a ws:// URL and client config; the
//     WebSocket speaks the SDK's protobuf frames (pbbp2): ping → pong control frames, event data
//     frames carrying im.message.receive_v1 JSON, and the client's response frames. An event
//     whose response code is not 200, or that gets no response, is sent again later.
//   - Webhook: with UseWebhook, events are POSTed (encrypted and signed when an encrypt key is
//     set) to the bot's callback URL and sent again until it answers 200.
//
// Events are delivered one at a time, in order: the next is sent after the previous one was
// acknowledged. Each test should use its own app id: the SDK caches tenant tokens process-wide
// by app id.
package feishutest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Config configures a Server. Zero fields get defaults.
type Config struct {
	AppID     string // default: a unique id per Server
	AppSecret string // default "secret"
	BotOpenID string // default "ou_bot"
	BotName   string // default "reef"
	// VerificationToken goes into every event's header.token.
	VerificationToken string
	// RetryDelay is the wait before an event that was not acknowledged is sent again
	// (default 50 ms).
	RetryDelay time.Duration
	// RateLimitReset is what a rate-limited answer tells the client to wait
	// (x-ogw-ratelimit-reset, seconds; default 0).
	RateLimitReset time.Duration
	// EditWindow is how long after sending a message the bot may edit it, as the tenant's
	// setting on the real platform; an edit later is refused with code 230075. Zero: no limit.
	EditWindow time.Duration
	// Concurrent pushes every queued event at once over the long connection, without waiting
	// for the previous one's response, as the real platform does; the SDK then handles each
	// frame in its own goroutine. Default: one at a time.
	Concurrent bool
	// ReconnectNonce and ReconnectInterval are the client config the endpoint hands out: the
	// first reconnect waits a random part of the nonce, each later one the interval. The real
	// platform says 30 s and 120 s; the default here is 0 and 1 s so tests stay fast.
	ReconnectNonce, ReconnectInterval time.Duration
}

// MaxEdits is how often the platform lets a message be edited (code 230072 after).
const MaxEdits = 20

// Error codes of the edit rules.
const (
	CodeRecalled       = 230011 // the message was recalled or does not exist
	CodeEditLimit      = 230072 // edited MaxEdits times already
	CodeEditWindow     = 230075 // the edit window is over
	CodeNotYourMessage = 230027 // not sent by the bot
)

// SentMessage is a message the bot created.
type SentMessage struct {
	ID       string
	ChatID   string
	MsgType  string
	Content  string // the raw JSON content as last set (edits replace it)
	Text     string // Content flattened to plain text
	ReplyTo  string // the message replied to, if any
	InThread bool
	Edits    int
	Recalled bool      // the bot (or Recall) withdrew it
	Created  time.Time // when the bot sent it
	// File and FileName are the upload an image or file message shows.
	File     []byte
	FileName string
	History  []string // Text as sent, then after each edit
}

// Server is the fake platform.
type Server struct {
	Config
	URL string // http://127.0.0.1:port

	srv  *httptest.Server
	wake chan struct{}
	done chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	tokens   map[string]bool
	sent     []*SentMessage
	byID     map[string]*SentMessage
	msgChat  map[string]string  // message id (events and bot messages) → chat id
	bodies   map[string]msgBody // message id → what GET returns
	uuids    map[string]string  // idempotency key → message id
	failures map[string][]int   // route → codes to answer next
	requests map[string]int     // route → count
	queue    []*pending         // events not yet acknowledged
	attempts map[string][]int   // event id → answer of each delivery attempt
	payloads map[string][]byte  // event id → payload, for Redeliver
	conn     *wsConn            // the current long connection
	connGen  map[string]bool    // connection tokens handed out by the endpoint
	hook     *webhookTarget     // set by UseWebhook
	seq      uint64
	refuse   int // handshakes still to refuse with the connection limit (RefuseConnections)
	connects int // long connections opened

	uploads   map[string]upload // image or file key → content (files.go)
	downloads int
}

// New starts a fake platform, stopped when the test ends.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := Start(cfg)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake platform on 127.0.0.1 outside of a test (reef-bench runs it this way).
// The caller stops it with Close.
func Start(cfg Config) *Server {
	if cfg.AppID == "" {
		cfg.AppID = "cli_" + randHex(8)
	}
	if cfg.AppSecret == "" {
		cfg.AppSecret = "secret"
	}
	if cfg.BotOpenID == "" {
		cfg.BotOpenID = "ou_bot"
	}
	if cfg.BotName == "" {
		cfg.BotName = "reef"
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 50 * time.Millisecond
	}
	s := &Server{
		Config: cfg,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		tokens: map[string]bool{}, byID: map[string]*SentMessage{}, msgChat: map[string]string{},
		uuids: map[string]string{}, bodies: map[string]msgBody{}, failures: map[string][]int{}, requests: map[string]int{},
		attempts: map[string][]int{}, payloads: map[string][]byte{}, connGen: map[string]bool{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /open-apis/auth/v3/tenant_access_token/internal", s.handleToken)
	mux.HandleFunc("GET /open-apis/bot/v3/info", s.authed("botinfo", s.handleBotInfo))
	mux.HandleFunc("POST /open-apis/im/v1/messages", s.authed("create", s.handleCreate))
	mux.HandleFunc("POST /open-apis/im/v1/messages/{id}/reply", s.authed("reply", s.handleReply))
	mux.HandleFunc("GET /open-apis/im/v1/messages/{id}", s.authed("get", s.handleGet))
	mux.HandleFunc("GET /open-apis/im/v1/messages/{id}/resources/{key}", s.authed("resource", s.handleResource))
	mux.HandleFunc("POST /open-apis/im/v1/images", s.authed("image", s.handleImageUpload))
	mux.HandleFunc("POST /open-apis/im/v1/files", s.authed("file", s.handleFileUpload))
	mux.HandleFunc("PUT /open-apis/im/v1/messages/{id}", s.authed("update", s.handleUpdate))
	mux.HandleFunc("PATCH /open-apis/im/v1/messages/{id}", s.authed("update", s.handleUpdate))
	mux.HandleFunc("DELETE /open-apis/im/v1/messages/{id}", s.authed("recall", s.handleRecall))
	mux.HandleFunc("POST /callback/ws/endpoint", s.handleEndpoint)
	mux.HandleFunc("GET /ws", s.handleWS)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	s.wg.Add(1)
	go s.pump()
	return s
}

// Close stops the server and its connections.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
	}
	close(s.done)
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// Sent returns the texts the bot sent to chatID (replies included) and did not recall, in
// order, as edited.
func (s *Server) Sent(chatID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.sent {
		if m.ChatID == chatID && !m.Recalled {
			out = append(out, m.Text)
		}
	}
	return out
}

// Messages returns copies of every message the bot created, in order.
func (s *Server) Messages() []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SentMessage, len(s.sent))
	for i, m := range s.sent {
		out[i] = *m
		out[i].History = append([]string(nil), m.History...)
	}
	return out
}

// FailNext makes the next request to route fail with the platform error code. Routes:
// "token", "botinfo", "create", "reply", "update", "recall", "get", "endpoint". Code 99991400 (or 429) answers
// HTTP 429 with a rate-limit reset header; 5xx codes answer that HTTP status; others HTTP 400.
func (s *Server) FailNext(route string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[route] = append(s.failures[route], code)
}

// Requests reports how many requests reached route (see FailNext for the names).
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

// Tokens returns the tenant access tokens handed out so far (for redaction tests).
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for t := range s.tokens {
		out = append(out, t)
	}
	return out
}

func (s *Server) nextID(prefix string) string {
	s.seq++
	return prefix + randHex(6) + "_" + strings.TrimLeft(hex.EncodeToString([]byte{byte(s.seq >> 8), byte(s.seq)}), "0")
}

func (s *Server) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
