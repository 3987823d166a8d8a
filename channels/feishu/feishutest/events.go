package feishutest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Message is a message a person sends to the bot, turned into an im.message.receive_v1 event.
type Message struct {
	ChatID     string
	ChatType   string // "p2p" (default) or "group"
	ThreadID   string
	SenderID   string // the sender's open_id
	SenderType string // "user" (default) or "app"
	Type       string // message_type: "text" (default), "post", "image"...
	Text       string // for text messages: the text, with @_user_N placeholders for Mentions
	Content    string // raw JSON content; overrides Text
	Mentions   []Mention
	ParentID   string    // the message this one replies to
	MessageID  string    // default: a fresh om_ id
	EventID    string    // default: a fresh event id
	Time       time.Time // default: now
}

// Mention is one mentioned user; Key defaults to @_user_N by position.
type Mention struct {
	Key    string
	OpenID string
	Name   string
}

// PostElem is one element of a rich-text paragraph: {"tag":"text","text":...},
// {"tag":"a","text":...,"href":...}, {"tag":"at","user_id":"@_user_1","user_name":...}.
type PostElem map[string]string

// BotMention is the mention of the fake's bot.
func (s *Server) BotMention() Mention { return Mention{OpenID: s.BotOpenID, Name: s.BotName} }

// UserSays queues a direct (p2p) text message and returns its message id.
func (s *Server) UserSays(chatID, openID, text string) string {
	_, id := s.Push(Message{ChatID: chatID, SenderID: openID, Text: text})
	return id
}

// GroupSays queues a group text message; text holds @_user_N placeholders for mentions.
func (s *Server) GroupSays(chatID, openID, text string, mentions ...Mention) string {
	_, id := s.Push(Message{ChatID: chatID, ChatType: "group", SenderID: openID, Text: text, Mentions: mentions})
	return id
}

// PostSays queues a rich-text message with a title and paragraphs.
func (s *Server) PostSays(chatID, chatType, openID, title string, paragraphs [][]PostElem, mentions ...Mention) string {
	content, _ := json.Marshal(map[string]any{"title": title, "content": paragraphs})
	_, id := s.Push(Message{ChatID: chatID, ChatType: chatType, SenderID: openID, Type: "post",
		Content: string(content), Mentions: mentions})
	return id
}

// Push queues the event of m for delivery to the bot and returns its event and message ids.
func (s *Server) Push(m Message) (eventID, messageID string) {
	payload, eventID, messageID := s.Event(m)
	var body struct {
		Event struct {
			Message struct {
				Type    string `json:"message_type"`
				Content string `json:"content"`
			} `json:"message"`
		} `json:"event"`
	}
	_ = json.Unmarshal(payload, &body)
	s.mu.Lock()
	s.msgChat[messageID] = m.ChatID
	s.bodies[messageID] = msgBody{msgType: body.Event.Message.Type, content: body.Event.Message.Content, mentions: m.Mentions}
	s.payloads[eventID] = payload
	s.queue = append(s.queue, &pending{eventID: eventID, payload: payload})
	s.mu.Unlock()
	s.kick()
	return eventID, messageID
}

// Redeliver sends an event again, as the platform does when it is unsure the bot got it.
func (s *Server) Redeliver(eventID string) {
	s.mu.Lock()
	payload, ok := s.payloads[eventID]
	if ok {
		s.queue = append(s.queue, &pending{eventID: eventID, payload: payload})
	}
	s.mu.Unlock()
	if !ok {
		panic("feishutest: Redeliver of unknown event " + eventID)
	}
	s.kick()
}

// Attempts returns the bot's answer to each delivery of the event so far: the response
// frame's code (WebSocket) or the HTTP status (webhook); 0 means no answer.
func (s *Server) Attempts(eventID string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.attempts[eventID]...)
}

// Pending reports how many events wait to be acknowledged.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Event builds the im.message.receive_v1 event (schema 2.0) for m.
func (s *Server) Event(m Message) (payload []byte, eventID, messageID string) {
	s.mu.Lock()
	if m.MessageID == "" {
		m.MessageID = s.nextID("om_")
	}
	if m.EventID == "" {
		m.EventID = s.nextID("ev_")
	}
	s.mu.Unlock()
	if m.ChatType == "" {
		m.ChatType = "p2p"
	}
	if m.SenderType == "" {
		m.SenderType = "user"
	}
	if m.Type == "" {
		m.Type = "text"
	}
	if m.Time.IsZero() {
		m.Time = time.Now()
	}
	if m.Content == "" && m.Type == "text" {
		raw, _ := json.Marshal(map[string]string{"text": m.Text})
		m.Content = string(raw)
	}
	var mentions []map[string]any
	for i, me := range m.Mentions {
		if me.Key == "" {
			me.Key = fmt.Sprintf("@_user_%d", i+1)
		}
		mentions = append(mentions, map[string]any{"key": me.Key, "name": me.Name, "tenant_key": "tenant",
			"id": map[string]string{"open_id": me.OpenID, "union_id": "on_" + me.OpenID, "user_id": ""}})
	}
	ms := strconv.FormatInt(m.Time.UnixMilli(), 10)
	message := map[string]any{
		"message_id": m.MessageID, "create_time": ms, "update_time": ms, "chat_id": m.ChatID,
		"chat_type": m.ChatType, "message_type": m.Type, "content": m.Content, "mentions": mentions,
	}
	if m.ThreadID != "" {
		message["thread_id"] = m.ThreadID
	}
	if m.ParentID != "" {
		message["parent_id"], message["root_id"] = m.ParentID, m.ParentID
	}
	ev := map[string]any{
		"schema": "2.0",
		"header": map[string]any{"event_id": m.EventID, "event_type": "im.message.receive_v1", "create_time": ms,
			"token": s.VerificationToken, "app_id": s.AppID, "tenant_key": "tenant"},
		"event": map[string]any{
			"sender": map[string]any{"sender_id": map[string]string{"open_id": m.SenderID, "union_id": "on_" + m.SenderID},
				"sender_type": m.SenderType, "tenant_key": "tenant"},
			"message": message,
		},
	}
	payload, _ = json.Marshal(ev)
	return payload, m.EventID, m.MessageID
}
