// Package slacktest is a fake Slack for tests, served on 127.0.0.1 so that slack-go runs
// unchanged against it: the Web API methods reef uses under /api/ (form or JSON bodies, the
// token as a form field or a Bearer header, {"ok":false,"error":…} refusals, Slack's limits),
// Socket Mode (apps.connections.open hands out a single-use ws:// URL; the socket says hello,
// sends WebSocket pings, carries events_api envelopes and takes their acks, and can be told
// to send a disconnect envelope), and the Events API over HTTP (signed requests to the bot's
// endpoint, retried with X-Slack-Retry-Num when not answered 200 in 3 s).
//
// Strict like the service: chat.postMessage refuses texts over 40,000 characters
// (msg_too_long), more than 50 blocks (invalid_blocks) and empty messages (no_text), and
// takes about one message a second per channel (a burst of 5), answering 429 with
// Retry-After past it; chat.update is Tier 3 (50 a minute, as a burst of 50); a bot can
// update and delete only its own messages; apps.connections.open takes only the app-level
// token; url_private answers the sign-in page without the bot token; an upload must be
// completed with the size it announced; message metadata must be an object with an
// alphanumeric event_type and an event_payload object, within MaxMetadata bytes, and is
// returned by conversations.history and conversations.replies only with include_all_metadata;
// the methods of rate tiers 3 and 4 answer 429 past their calls a minute per workspace. An
// envelope not acknowledged within AckTimeout, or sent on a socket that closed before its
// ack, is sent again with retry_attempt+1, up to three times as Slack does; after that it is
// lost (Lost counts them).
//
// A Server also implements channeltest.Platform.
package slacktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
)

// Defaults of Config.
const (
	DefaultBotToken      = "xoxb-1-fake-bot-token"
	DefaultAppToken      = "xapp-1-fake-app-token"
	DefaultSigningSecret = "fake-signing-secret"
	DefaultBotUserID     = "UBOT"
	DefaultTeamID        = "T1"
	DefaultScopes        = "app_mentions:read,chat:write,channels:history,groups:history,im:history,mpim:history,files:read,files:write,reactions:write"
)

// Config configures a fake Slack. The zero value works.
type Config struct {
	BotToken, AppToken, SigningSecret string
	BotUserID, TeamID                 string
	Scopes                            string        // the X-OAuth-Scopes auth.test answers with
	PingInterval                      time.Duration // WebSocket pings; default 500ms
	AckTimeout                        time.Duration // before an unacknowledged envelope is sent again; default 3s
	// EventsURL, when set, makes the fake deliver events by HTTP to it (Events API mode)
	// instead of over Socket Mode.
	EventsURL string
	// OnSend, when set, is called with every message the bot posts and every text it
	// updates a message to (the fake's lock is held: it must not call the Server).
	OnSend func(channel, ts, text string)
}

// Message is a message in a channel.
type Message struct {
	TS, Channel, ThreadTS, User, Text string
	Bot                               bool
	Edits                             int
	Deleted                           bool
	Files                             []string // names of the files shared with it
	Reactions                         []string
	// Metadata is the message metadata it was posted with (JSON: event_type,
	// event_payload), nil when none.
	Metadata json.RawMessage
	// Blocks are the message's Block Kit blocks as posted, nil when none.
	Blocks json.RawMessage
}

// Server is a running fake Slack.
type Server struct {
	URL    string // http://127.0.0.1:port
	APIURL string // URL + "/api/", the bot's Config.APIURL

	cfg  Config
	http *httptest.Server

	mu       sync.Mutex
	seq      int64
	msgs     map[string][]*Message // by channel
	byTS     map[string]*Message   // channel + "/" + ts
	gone     map[string]bool       // channels that do not exist
	calls    map[string]int
	force429 map[string]int
	lose     map[string]int
	buckets  map[string]*bucket
	statuses []string
	files    map[string]*upload
	private  map[string]privateFile

	tickets  map[string]bool
	conn     *wsConn
	conns    int
	pending  map[string]*envelope
	acked    int
	lost     int
	badAcks  int
	delivery sync.WaitGroup
	closed   chan struct{}
}

// New starts a fake Slack; it stops when the test ends.
func New(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := Start(cfg)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake Slack; Close stops it.
func Start(cfg Config) *Server {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&cfg.BotToken, DefaultBotToken)
	def(&cfg.AppToken, DefaultAppToken)
	def(&cfg.SigningSecret, DefaultSigningSecret)
	def(&cfg.BotUserID, DefaultBotUserID)
	def(&cfg.TeamID, DefaultTeamID)
	def(&cfg.Scopes, DefaultScopes)
	if cfg.PingInterval == 0 {
		cfg.PingInterval = 500 * time.Millisecond
	}
	if cfg.AckTimeout == 0 {
		cfg.AckTimeout = 3 * time.Second
	}
	s := &Server{cfg: cfg, msgs: map[string][]*Message{}, byTS: map[string]*Message{}, gone: map[string]bool{},
		calls: map[string]int{}, force429: map[string]int{}, lose: map[string]int{}, buckets: map[string]*bucket{}, files: map[string]*upload{},
		private: map[string]privateFile{}, tickets: map[string]bool{}, pending: map[string]*envelope{},
		closed: make(chan struct{}), seq: time.Now().Unix() * 1_000_000}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.api)
	mux.HandleFunc("GET /link/", s.socket)
	mux.HandleFunc("POST /upload/{id}", s.receiveUpload)
	mux.HandleFunc("GET /files-pri/{path...}", s.servePrivate)
	mux.HandleFunc("GET /signin", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>Sign in to your workspace</body></html>")
	})
	s.http = httptest.NewServer(mux)
	s.URL = s.http.URL
	s.APIURL = s.URL + "/api/"
	go s.redeliverLoop()
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return
	default:
	}
	close(s.closed)
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	s.delivery.Wait()
	s.http.CloseClientConnections()
	s.http.Close()
}

// SetEventsURL makes the fake deliver events by HTTP to url (the Events API) from now on.
func (s *Server) SetEventsURL(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.EventsURL = url
}

// Config returns the configuration in force (with defaults).
func (s *Server) Config() Config { return s.cfg }

// nextTS returns a new unique message ts.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", s.seq/1_000_000, s.seq%1_000_000)
}

// UserMessage is a message a person posts.
type UserMessage struct {
	Channel     string // D… for a DM; any other id for a channel
	ChannelType string // im (default for D…), channel, group, mpim
	User        string
	Text        string
	ThreadTS    string
	ClientMsgID string // default: a fresh one
	Files       []FileSpec
}

// Post makes a person post m; the bot gets a message event, and an app_mention event too
// when the text mentions the bot in a channel (as an app subscribed to both gets). It
// returns the message's ts.
func (s *Server) Post(m UserMessage) string {
	s.mu.Lock()
	if m.ChannelType == "" {
		m.ChannelType = "channel"
		if strings.HasPrefix(m.Channel, "D") || !strings.HasPrefix(m.Channel, "C") && !strings.HasPrefix(m.Channel, "G") {
			m.ChannelType = "im"
		}
	}
	ts := s.nextTS()
	if m.ClientMsgID == "" {
		m.ClientMsgID = fmt.Sprintf("cm-%s", ts)
	}
	msg := &Message{TS: ts, Channel: m.Channel, ThreadTS: m.ThreadTS, User: m.User, Text: m.Text}
	ev := map[string]any{"type": "message", "channel": m.Channel, "channel_type": m.ChannelType, "user": m.User,
		"text": m.Text, "ts": ts, "event_ts": ts, "client_msg_id": m.ClientMsgID, "team": s.cfg.TeamID}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	if len(m.Files) > 0 {
		ev["subtype"] = "file_share"
		var fs []map[string]any
		for _, f := range m.Files {
			fs = append(fs, s.sharePrivate(f))
			msg.Files = append(msg.Files, f.Name)
		}
		ev["files"] = fs
	}
	s.record(msg)
	s.emit(ev)
	if m.ChannelType != "im" && strings.Contains(m.Text, "<@"+s.cfg.BotUserID+">") {
		mention := map[string]any{}
		for k, v := range ev {
			if k != "channel_type" && k != "subtype" {
				mention[k] = v
			}
		}
		mention["type"] = "app_mention"
		s.emit(mention)
	}
	s.mu.Unlock()
	return ts
}

// UserSays implements channeltest.Platform: a direct message.
func (s *Server) UserSays(t *testing.T, chatID, senderID, text string) {
	s.Post(UserMessage{Channel: chatID, ChannelType: "im", User: senderID, Text: text})
}

// Sent implements channeltest.Platform: the current texts of the bot's messages in chatID.
func (s *Server) Sent(chatID string) []string {
	var out []string
	for _, m := range s.Messages(chatID) {
		if m.Bot && !m.Deleted {
			out = append(out, m.Text)
		}
	}
	return out
}

// Messages returns copies of every message of a channel, people's and the bot's, in order.
func (s *Server) Messages(chatID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs[chatID] {
		c := *m
		c.Files = append([]string(nil), m.Files...)
		out = append(out, c)
	}
	return out
}

// Limit implements channeltest.Platform: reef keeps to Slack's recommended 4,000 characters.
func (s *Server) Limit() (int, channels.Measure) { return 4000, channels.Runes }

// Redelivers implements channeltest.Platform: Slack sends an unacknowledged envelope again.
func (s *Server) Redelivers() bool { return true }

// RemoveChannel makes chatID unknown: sends to it get channel_not_found.
func (s *Server) RemoveChannel(chatID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[chatID] = true
}

// Calls returns how often a Web API method was called.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// RateLimit makes the next n calls of method answer 429 with Retry-After: 1.
func (s *Server) RateLimit(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.force429[method] += n
}

// LoseAnswers makes the next n calls of method be carried out but their answers lost: the
// connection closes before the response (a timeout, a reset), so the bot cannot know.
func (s *Server) LoseAnswers(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose[method] += n
}

// Statuses returns the assistant thread statuses set, as "channel/thread_ts: status".
func (s *Server) Statuses() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.statuses...)
}

// Acked, Lost and BadAcks count envelopes: acknowledged, dropped after their retries, and
// acks for envelopes the fake never sent or already had acknowledged.
func (s *Server) Acked() int   { s.mu.Lock(); defer s.mu.Unlock(); return s.acked }
func (s *Server) Lost() int    { s.mu.Lock(); defer s.mu.Unlock(); return s.lost }
func (s *Server) BadAcks() int { s.mu.Lock(); defer s.mu.Unlock(); return s.badAcks }

// Pending is how many envelopes wait for their ack or for a socket.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Connections is how many Socket Mode connections were opened.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func (s *Server) record(m *Message) {
	s.msgs[m.Channel] = append(s.msgs[m.Channel], m)
	s.byTS[m.Channel+"/"+m.TS] = m
}

// callback wraps an inner event as Slack's event_callback.
func (s *Server) callback(ev map[string]any) json.RawMessage {
	s.seq++
	cb := map[string]any{"token": "verification-token-unused", "team_id": s.cfg.TeamID, "api_app_id": "AFAKE",
		"event": ev, "type": "event_callback", "event_id": fmt.Sprintf("Ev%d", s.seq), "event_time": time.Now().Unix(),
		"authorizations": []map[string]any{{"team_id": s.cfg.TeamID, "user_id": s.cfg.BotUserID, "is_bot": true}}}
	raw, _ := json.Marshal(cb)
	return raw
}
