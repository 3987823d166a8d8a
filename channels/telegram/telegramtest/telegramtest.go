// Package telegramtest is a fake Telegram Bot API on 127.0.0.1 that speaks the real wire
// format (POST /bot<token>/<method>, JSON {"ok":true,"result":...} or {"ok":false,
// "error_code":N,"description":...,"parameters":{"retry_after":N}}), so telego runs
// unchanged against it.
//
// It implements getMe, getUpdates (long polling with exact offset semantics: updates below
// the offset are confirmed and dropped), sendMessage (400 over 4096 UTF-16 units after entity
// parsing, 400 "can't parse entities" for unbalanced or unknown HTML tags), editMessageText,
// sendChatAction, deleteMessage, setWebhook and deleteWebhook (getUpdates answers 409 while a
// webhook is set), and files (files.go): getFile with GET /file/bot<token>/<file_path> for
// what users send (UserSendsPhoto, UserSendsDocument, UserSendsVoice, UserSendsVideo,
// UserSendsVideoNote, UserSendsAnimation), sendPhoto, sendDocument, sendVoice and sendVideo
// as multipart uploads within the Bot API's limits (an empty file is refused with "file must
// be non-empty", a photo outside sendPhoto's dimensions with PHOTO_INVALID_DIMENSIONS, a
// getFile over 20 MB with "file is too big"). Tests play users with UserSays and Queue, read replies with Sent and
// Messages, and inject failures with FailNext and Drop.
package telegramtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mymmrac/telego"
)

// Token is the bot token the server accepts by default. Any other token gets 401.
const Token = "123456:AAHfakeTokenForReefTestsOnly_abcdef"

// tokenShape is compiled on first use (see secretToken).
var tokenShape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+:[\w-]{35}$`) })

// Limit is the longest message text, in UTF-16 units after entity parsing.
const Limit = 4096

// SentMessage is one message the bot sent.
type SentMessage struct {
	MessageID int
	ChatID    int64
	ThreadID  int
	ReplyTo   int    // message id from reply_parameters, 0 if none
	Raw       string // text as sent
	ParseMode string
	Text      string // text as the user sees it (tags stripped, entities decoded)
	Edits     int
	Deleted   bool
	// Files (sendPhoto, sendDocument, sendVoice, sendVideo): Kind is "photo", "document",
	// "voice" or "video";
	// Text holds the caption.
	Kind     string
	FileName string
	File     []byte
	History  []string // every text the user saw, the first as sent, then each edit's
	// DeleteCalls counts the deleteMessage calls that named this message, the first that
	// deleted it and any after (each refused as not found).
	DeleteCalls int
}

type failure struct {
	after       int // calls to let through first
	code        int
	description string
	retryAfter  int
}

// Server is a fake Bot API server.
type Server struct {
	// URL is the API root to pass to telego.WithAPIServer (or telegram.Config.APIRoot).
	URL string

	token string
	bot   telego.User
	srv   *httptest.Server

	mu         sync.Mutex
	updates    []telego.Update // not yet confirmed, in order
	nextUpdate int
	confirmed  int           // highest offset the bot sent
	notify     chan struct{} // closed and replaced when updates are queued
	drop       chan struct{} // closed and replaced on Drop
	dropArmed  bool
	closed     chan struct{}
	msgIDs     map[int64]int // per chat message id counter
	sent       map[int64][]*SentMessage
	actions    map[int64][]string
	reactions  map[int64][]Reaction
	fail       map[string][]failure
	down       map[string]int // method → the status every call fails with (Down), until Up
	calls      map[string]int
	webhookURL string
	secret     string
	allowed    []string
	onCall     func(method string)
	onSend     func(SentMessage)
	files      map[string]file // file_id → file (files.go)
	nextFile   int
	downloads  int
	editEvery  time.Duration       // LimitEdits: least time between two edits in a chat
	lastEdit   map[int64]time.Time // chat → its last edit taken
	limited    int                 // edits refused with 429 by LimitEdits
}

// New starts a fake server accepting Token; it is closed when the test ends.
func New(t testing.TB) *Server { return NewWithToken(t, Token) }

// NewWithToken starts a fake server accepting token; it is closed when the test ends.
func NewWithToken(t testing.TB, token string) *Server {
	t.Helper()
	s, err := Start(token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake server accepting token on 127.0.0.1, outside of a test (reef-bench
// runs it this way). The caller closes it with Close.
func Start(token string) (*Server, error) {
	if !tokenShape().MatchString(token) {
		return nil, fmt.Errorf("telegramtest: token %q does not look like <bot id>:<35 characters>", token)
	}
	s := &Server{
		token:      token,
		bot:        telego.User{ID: 123456, IsBot: true, FirstName: "Reef", Username: "reef_test_bot"},
		nextUpdate: 500000,
		notify:     make(chan struct{}),
		drop:       make(chan struct{}),
		closed:     make(chan struct{}),
		msgIDs:     map[int64]int{},
		sent:       map[int64][]*SentMessage{},
		actions:    map[int64][]string{},
		reactions:  map[int64][]Reaction{},
		fail:       map[string][]failure{},
		down:       map[string]int{},
		calls:      map[string]int{},
		files:      map[string]file{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s, nil
}

// LimitEdits makes the server enforce Telegram's per-chat edit rate: an editMessageText in a
// chat less than every after the chat's previous edit is refused with 429 and retry_after 1.
// 0 lifts the limit. Telegram documents about one message a second per chat, "short bursts"
// allowed, and 20 a minute in a group, sends and edits sharing the budget (the Bot FAQ; the
// Bot API's maintainer in tdlib/td#2592 and #3034). This fake is stricter on edits (no burst
// at all) and looser on the rest (sendMessage and groups are not limited): the burst size
// Telegram allows is not published, so a shared budget could not be modelled faithfully.
func (s *Server) LimitEdits(every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.editEvery, s.lastEdit = every, map[int64]time.Time{}
}

// RateLimited returns how many edits LimitEdits refused.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// OnCall sets a function called at the start of every call with a valid token, with the
// method's name (reef-bench notes the first getUpdates). nil removes it.
func (s *Server) OnCall(fn func(method string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCall = fn
}

// OnSend sets a function called with a copy of every message the bot sends or edits (Edits
// > 0 after an edit), once it is recorded and before the response is written (reef-bench
// times replies this way). nil removes it.
func (s *Server) OnSend(fn func(SentMessage)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onSend = fn
}

// Close releases waiting long polls and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return
	default:
		close(s.closed)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// BotUser is the bot's own user, as getMe returns it.
func (s *Server) BotUser() telego.User { return s.bot }

// Message builds a message from sender in chat with the chat's next message id. chatType is
// telego.ChatTypePrivate, ChatTypeGroup or ChatTypeSupergroup. Change it, then Queue it.
func (s *Server) Message(chatID int64, chatType string, senderID int64, text string) *telego.Message {
	s.mu.Lock()
	s.msgIDs[chatID]++
	id := s.msgIDs[chatID]
	s.mu.Unlock()
	return &telego.Message{
		MessageID: id,
		From:      &telego.User{ID: senderID, FirstName: "User", LastName: formatID(senderID), Username: "user" + formatID(senderID)},
		Date:      time.Now().Unix(),
		Chat:      telego.Chat{ID: chatID, Type: chatType},
		Text:      text,
	}
}

// UserSays queues a text message from senderID in the private chat chatID and returns the
// update id.
func (s *Server) UserSays(chatID, senderID int64, text string) int {
	return s.Queue(telego.Update{Message: s.Message(chatID, telego.ChatTypePrivate, senderID, text)})
}

// Queue adds an update for the bot, giving it the next update id when it has none, and
// wakes a waiting getUpdates. It returns the update id.
func (s *Server) Queue(u telego.Update) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.UpdateID == 0 {
		u.UpdateID = s.nextUpdate
	}
	s.nextUpdate = max(s.nextUpdate, u.UpdateID+1)
	s.updates = append(s.updates, u)
	close(s.notify)
	s.notify = make(chan struct{})
	return u.UpdateID
}

// Sent returns the texts the bot sent to chatID, as the user sees them, in order.
func (s *Server) Sent(chatID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.sent[chatID] {
		if !m.Deleted { // as the user sees the chat
			out = append(out, m.Text)
		}
	}
	return out
}

// Messages returns copies of the messages the bot sent to chatID, in order.
func (s *Server) Messages(chatID int64) []SentMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SentMessage
	for _, m := range s.sent[chatID] {
		c := *m
		c.History = slices.Clone(m.History)
		out = append(out, c)
	}
	return out
}

// Actions returns the chat actions (e.g. "typing") the bot sent to chatID.
func (s *Server) Actions(chatID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.actions[chatID]...)
}

// Reaction is an emoji reaction the bot set on a message (setMessageReaction).
type Reaction struct {
	MessageID int
	Emoji     string // "" when the bot removed its reaction
}

// Reactions returns the reactions the bot set in chatID, in order.
func (s *Server) Reactions(chatID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Reaction(nil), s.reactions[chatID]...)
}

// FailNext makes the next call of method fail with code (429, 403, 409, 500, ...) and a
// description like Telegram's; retryAfter (seconds) is sent as parameters.retry_after when
// positive. Calls queue up: FailNext twice fails the next two calls.
func (s *Server) FailNext(method string, code, retryAfter int) {
	s.FailNextWith(method, code, defaultDescription(code, retryAfter), retryAfter)
}

// FailNextWith is FailNext with a chosen description.
func (s *Server) FailNextWith(method string, code int, description string, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = append(s.fail[method], failure{code: code, description: description, retryAfter: retryAfter})
}

// FailAfter lets after calls of method succeed, then fails the next one like FailNext.
func (s *Server) FailAfter(method string, after, code, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = append(s.fail[method], failure{after: after, code: code, description: defaultDescription(code, retryAfter), retryAfter: retryAfter})
}

// Down makes every call of each method fail with code (500, 502, ...) until Up: an outage
// of those methods. Calls still count in Calls.
func (s *Server) Down(code int, methods ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range methods {
		s.down[m] = code
	}
}

// Up ends every outage Down began.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.down)
}

// Drop breaks the bot's connection: a getUpdates waiting now has its connection closed;
// if none is waiting, the next getUpdates fails with 502 Bad Gateway.
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropArmed = true
	close(s.drop)
	s.drop = make(chan struct{})
}

// Confirmed returns the highest offset the bot sent to getUpdates: every update with a lower
// id is confirmed and will not be sent again.
func (s *Server) Confirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Pending returns the number of updates not yet confirmed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// Calls returns how many times method was called (with a valid token).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Webhook returns the URL and secret token set by setWebhook ("" when none).
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhookURL, s.secret
}

// AllowedUpdates returns the allowed_updates of the last getUpdates or setWebhook call.
func (s *Server) AllowedUpdates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.allowed...)
}

func defaultDescription(code, retryAfter int) string {
	switch code {
	case 400:
		return "Bad Request: chat not found"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden: bot was blocked by the user"
	case 404:
		return "Not Found"
	case 409:
		return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	case 429:
		return "Too Many Requests: retry after " + formatID(int64(retryAfter))
	case 502:
		return "Bad Gateway"
	default:
		return "Internal Server Error"
	}
}
