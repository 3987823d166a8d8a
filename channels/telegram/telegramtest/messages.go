package telegramtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mymmrac/telego"
)

// textParams are the parameters of sendMessage and editMessageText the fake reads.
type textParams struct {
	ChatID          json.RawMessage `json:"chat_id"`
	MessageID       int             `json:"message_id"`
	MessageThreadID int             `json:"message_thread_id"`
	Text            string          `json:"text"`
	ParseMode       string          `json:"parse_mode"`
	ReplyParameters *struct {
		MessageID int `json:"message_id"`
	} `json:"reply_parameters"`
	Action string `json:"action"`
}

// parseText checks a message text the way Telegram does and returns what the user sees.
func parseText(w http.ResponseWriter, p *textParams) (string, bool) {
	if strings.TrimSpace(p.Text) == "" {
		writeErr(w, http.StatusBadRequest, "Bad Request: message text is empty", 0)
		return "", false
	}
	plain := p.Text
	if strings.EqualFold(p.ParseMode, telego.ModeHTML) {
		var err error
		if plain, err = ParseHTML(p.Text); err != nil {
			writeErr(w, http.StatusBadRequest, "Bad Request: can't parse entities: "+err.Error(), 0)
			return "", false
		}
	}
	if UTF16Len(plain) > Limit {
		writeErr(w, http.StatusBadRequest, "Bad Request: message is too long", 0)
		return "", false
	}
	return plain, true
}

func (s *Server) sendMessage(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p textParams
	if !decode(w, body, &p) {
		return
	}
	chat, ok := chatID(p.ChatID)
	if !ok {
		writeErr(w, http.StatusBadRequest, "Bad Request: chat not found", 0)
		return
	}
	plain, ok := parseText(w, &p)
	if !ok {
		return
	}
	m := &SentMessage{ChatID: chat, ThreadID: p.MessageThreadID, Raw: p.Text, ParseMode: p.ParseMode, Text: plain,
		History: []string{plain}}
	if p.ReplyParameters != nil {
		m.ReplyTo = p.ReplyParameters.MessageID
	}
	s.mu.Lock()
	s.msgIDs[chat]++
	m.MessageID = s.msgIDs[chat]
	s.sent[chat] = append(s.sent[chat], m)
	msg := s.asMessage(m)
	onSend, sent := s.onSend, *m
	s.mu.Unlock()
	if onSend != nil {
		onSend(sent)
	}
	writeOK(w, msg)
}

func (s *Server) editMessageText(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p textParams
	if !decode(w, body, &p) {
		return
	}
	chat, _ := chatID(p.ChatID)
	plain, ok := parseText(w, &p)
	if !ok {
		return
	}
	s.mu.Lock()
	if s.editEvery > 0 {
		now := time.Now()
		if last, ok := s.lastEdit[chat]; ok && now.Sub(last) < s.editEvery {
			s.limited++
			s.mu.Unlock()
			writeErr(w, http.StatusTooManyRequests, "Too Many Requests: retry after 1", 1)
			return
		}
		s.lastEdit[chat] = now
	}
	m := s.find(chat, p.MessageID)
	switch {
	case m == nil || m.Deleted: // Telegram: a deleted message is gone
		s.mu.Unlock()
		writeErr(w, http.StatusBadRequest, "Bad Request: message to edit not found", 0)
		return
	case m.Raw == p.Text && m.ParseMode == p.ParseMode:
		s.mu.Unlock()
		writeErr(w, http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message", 0)
		return
	}
	m.Raw, m.ParseMode, m.Text = p.Text, p.ParseMode, plain
	m.Edits++
	m.History = append(m.History, plain)
	msg := s.asMessage(m)
	onSend, edited := s.onSend, *m
	s.mu.Unlock()
	if onSend != nil {
		onSend(edited)
	}
	writeOK(w, msg)
}

func (s *Server) deleteMessage(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p textParams
	if !decode(w, body, &p) {
		return
	}
	chat, _ := chatID(p.ChatID)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(chat, p.MessageID)
	if m != nil {
		m.DeleteCalls++
	}
	if m == nil || m.Deleted {
		writeErr(w, http.StatusBadRequest, "Bad Request: message to delete not found", 0)
		return
	}
	m.Deleted = true
	writeOK(w, true)
}

func (s *Server) sendChatAction(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p textParams
	if !decode(w, body, &p) {
		return
	}
	chat, ok := chatID(p.ChatID)
	if !ok {
		writeErr(w, http.StatusBadRequest, "Bad Request: chat not found", 0)
		return
	}
	s.mu.Lock()
	s.actions[chat] = append(s.actions[chat], p.Action)
	s.mu.Unlock()
	writeOK(w, true)
}

// secretToken is compiled on first use: reef-bench links this package into its binary,
// and compiling `{1,256}` at init would slow every start of it.
var secretToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`) })

func (s *Server) setWebhook(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p telego.SetWebhookParams
	if !decode(w, body, &p) {
		return
	}
	if u, err := url.Parse(p.URL); p.URL != "" && (err != nil || u.Scheme != "https") {
		writeErr(w, http.StatusBadRequest, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook", 0)
		return
	}
	if p.SecretToken != "" && !secretToken().MatchString(p.SecretToken) {
		writeErr(w, http.StatusBadRequest, "Bad Request: secret token contains unallowed characters", 0)
		return
	}
	s.mu.Lock()
	s.webhookURL, s.secret = p.URL, p.SecretToken
	if p.AllowedUpdates != nil {
		s.allowed = p.AllowedUpdates
	}
	s.mu.Unlock()
	writeOK(w, true)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p telego.DeleteWebhookParams
	if !decode(w, body, &p) {
		return
	}
	s.mu.Lock()
	s.webhookURL, s.secret = "", ""
	if p.DropPendingUpdates {
		s.updates = nil
	}
	s.mu.Unlock()
	writeOK(w, true)
}

// find returns the bot's message id in chat; s.mu is held.
func (s *Server) find(chat int64, id int) *SentMessage {
	for _, m := range s.sent[chat] {
		if m.MessageID == id {
			return m
		}
	}
	return nil
}

// asMessage is the Message object Telegram returns for a sent message.
func (s *Server) asMessage(m *SentMessage) *telego.Message {
	chatType := telego.ChatTypePrivate
	if m.ChatID < 0 {
		chatType = telego.ChatTypeSupergroup
	}
	bot := s.bot
	return &telego.Message{
		MessageID:       m.MessageID,
		MessageThreadID: m.ThreadID,
		From:            &bot,
		Date:            time.Now().Unix(),
		Chat:            telego.Chat{ID: m.ChatID, Type: chatType},
		Text:            m.Text,
		IsTopicMessage:  m.ThreadID != 0,
	}
}

// setMessageReaction records the bot's reaction: at most one emoji reaction (a bot is not a
// premium user), of type "emoji"; an empty list removes it.
func (s *Server) setMessageReaction(w http.ResponseWriter, _ *http.Request, body []byte) {
	var p struct {
		ChatID    json.RawMessage `json:"chat_id"`
		MessageID int             `json:"message_id"`
		Reaction  []struct {
			Type  string `json:"type"`
			Emoji string `json:"emoji"`
		} `json:"reaction"`
	}
	if !decode(w, body, &p) {
		return
	}
	chat, ok := chatID(p.ChatID)
	switch {
	case !ok:
		writeErr(w, http.StatusBadRequest, "Bad Request: chat not found", 0)
		return
	case p.MessageID <= 0:
		writeErr(w, http.StatusBadRequest, "Bad Request: message to react not found", 0)
		return
	case len(p.Reaction) > 1:
		writeErr(w, http.StatusBadRequest, "Bad Request: REACTIONS_TOO_MANY", 0)
		return
	case len(p.Reaction) == 1 && (p.Reaction[0].Type != "emoji" || p.Reaction[0].Emoji == ""):
		writeErr(w, http.StatusBadRequest, "Bad Request: REACTION_INVALID", 0)
		return
	}
	r := Reaction{MessageID: p.MessageID}
	if len(p.Reaction) == 1 {
		r.Emoji = p.Reaction[0].Emoji
	}
	s.mu.Lock()
	s.reactions[chat] = append(s.reactions[chat], r)
	s.mu.Unlock()
	writeOK(w, true)
}
