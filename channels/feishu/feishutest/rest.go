package feishutest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Content size limits of the real platform (request body of the content field).
const (
	maxPostContent = 30 << 10
	maxTextContent = 150 << 10
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "msg": msg})
}

// apiErrorFalse answers 230001 with msg and returns false (for checkContent).
func apiErrorFalse(w http.ResponseWriter, msg string) bool {
	apiError(w, http.StatusBadRequest, 230001, msg)
	return false
}

// injected answers a failure queued by FailNext for route, reporting whether it did.
func (s *Server) injected(w http.ResponseWriter, route string) bool {
	s.mu.Lock()
	s.requests[route]++
	q := s.failures[route]
	if len(q) == 0 {
		s.mu.Unlock()
		return false
	}
	code := q[0]
	s.failures[route] = q[1:]
	reset := s.RateLimitReset
	s.mu.Unlock()
	switch {
	case code == 429 || code == 99991400:
		w.Header().Set("X-Ogw-Ratelimit-Reset", strconv.FormatFloat(reset.Seconds(), 'f', -1, 64))
		apiError(w, http.StatusTooManyRequests, 99991400, "request trigger frequency limit")
	case code >= 500 && code < 600:
		apiError(w, code, code, "internal error")
	default:
		apiError(w, http.StatusBadRequest, code, "injected failure")
	}
	return true
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if s.injected(w, "token") {
		return
	}
	var req struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, 10003, "invalid param")
		return
	}
	if req.AppID != s.AppID {
		apiError(w, http.StatusBadRequest, 10003, "invalid param")
		return
	}
	if req.AppSecret != s.AppSecret {
		apiError(w, http.StatusBadRequest, 10014, "app secret invalid")
		return
	}
	s.mu.Lock()
	token := "t-" + randHex(20)
	s.tokens[token] = true
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "tenant_access_token": token, "expire": 7200})
}

// authed checks the bearer token, then counts the request and plays injected failures.
func (s *Server) authed(route string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		ok := s.tokens[token]
		s.mu.Unlock()
		if !ok {
			apiError(w, http.StatusBadRequest, 99991663, "Invalid access token for authorization. Please make a request with token attached.")
			return
		}
		if s.injected(w, route) {
			return
		}
		h(w, r)
	}
}

func (s *Server) handleBotInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "ok", "bot": map[string]any{
		"activate_status": 2, "app_name": s.BotName, "avatar_url": "", "ip_white_list": []string{}, "open_id": s.BotOpenID,
	}})
}

// sendBody is the body of create, reply and update.
type sendBody struct {
	ReceiveID     string `json:"receive_id"`
	MsgType       string `json:"msg_type"`
	Content       string `json:"content"`
	UUID          string `json:"uuid"`
	ReplyInThread bool   `json:"reply_in_thread"`
}

// checkContent validates a message body like the platform does, answering the error itself.
func checkContent(w http.ResponseWriter, b sendBody) bool {
	switch {
	case b.MsgType == "image" || b.MsgType == "file":
		return json.Valid([]byte(b.Content)) || apiErrorFalse(w, "content is not valid JSON")
	case b.MsgType != "text" && b.MsgType != "post":
		apiError(w, http.StatusBadRequest, 230001, "invalid message type for this fake: "+b.MsgType)
	case !utf8.ValidString(b.Content) || !json.Valid([]byte(b.Content)):
		apiError(w, http.StatusBadRequest, 230001, "content is not valid JSON")
	case b.MsgType == "post" && len(b.Content) > maxPostContent, b.MsgType == "text" && len(b.Content) > maxTextContent:
		apiError(w, http.StatusBadRequest, 230025, "message content too long")
	case Flatten(b.MsgType, b.Content) == "":
		apiError(w, http.StatusBadRequest, 230001, "empty message")
	default:
		return true
	}
	return false
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var b sendBody
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&b); err != nil || r.URL.Query().Get("receive_id_type") != "chat_id" || b.ReceiveID == "" {
		apiError(w, http.StatusBadRequest, 230001, "invalid request (want receive_id_type=chat_id and receive_id)")
		return
	}
	if checkContent(w, b) {
		s.store(w, b, b.ReceiveID, "")
	}
}

func (s *Server) handleReply(w http.ResponseWriter, r *http.Request) {
	var b sendBody
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&b); err != nil {
		apiError(w, http.StatusBadRequest, 230001, "invalid request")
		return
	}
	parent := r.PathValue("id")
	s.mu.Lock()
	chat, ok := s.msgChat[parent]
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusBadRequest, 230011, "the message was withdrawn or does not exist")
		return
	}
	if checkContent(w, b) {
		s.store(w, b, chat, parent)
	}
}

// store records a new message (or finds the one made with the same uuid) and answers it.
func (s *Server) store(w http.ResponseWriter, b sendBody, chat, parent string) {
	s.mu.Lock()
	id, dup := s.uuids[b.UUID]
	if !dup || b.UUID == "" {
		id = s.nextID("om_")
		m := &SentMessage{ID: id, ChatID: chat, MsgType: b.MsgType, Content: b.Content,
			Text: Flatten(b.MsgType, b.Content), ReplyTo: parent, InThread: b.ReplyInThread, Created: time.Now()}
		m.History = []string{m.Text}
		if (b.MsgType == "image" || b.MsgType == "file") && !s.attach(m) {
			s.mu.Unlock()
			apiError(w, http.StatusBadRequest, 230001, "invalid image_key or file_key")
			return
		}
		s.sent = append(s.sent, m)
		s.byID[id] = m
		s.msgChat[id] = chat
		s.bodies[id] = msgBody{msgType: b.MsgType, content: b.Content}
		if b.UUID != "" {
			s.uuids[b.UUID] = id
		}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{
		"message_id": id, "chat_id": chat, "msg_type": b.MsgType, "parent_id": parent,
	}})
}

// handleUpdate edits a message as the platform allows: only the bot's own messages (which are
// text or post: the types an edit may set, checkContent), not recalled, at most MaxEdits
// times, within EditWindow.
func (s *Server) handleUpdate(w http.ResponseWriter, r *http.Request) {
	var b sendBody
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&b); err != nil {
		apiError(w, http.StatusBadRequest, 230001, "invalid request")
		return
	}
	if b.MsgType != "text" && b.MsgType != "post" {
		apiError(w, http.StatusBadRequest, 230001, "invalid message type for an edit: "+b.MsgType)
		return
	}
	if !checkContent(w, b) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := r.PathValue("id")
	m, ok := s.byID[id]
	switch {
	case !ok && s.bodies[id].msgType != "":
		apiError(w, http.StatusBadRequest, CodeNotYourMessage, "the message was not sent by this bot")
	case !ok || m.Recalled:
		apiError(w, http.StatusBadRequest, CodeRecalled, "the message was withdrawn or does not exist")
	case m.Edits >= MaxEdits:
		apiError(w, http.StatusBadRequest, CodeEditLimit, "the message has reached the number of times it can be edited")
	case s.EditWindow > 0 && time.Since(m.Created) > s.EditWindow:
		apiError(w, http.StatusBadRequest, CodeEditWindow, "the message can no longer be edited: the edit time limit is over")
	default:
		m.MsgType, m.Content, m.Text = b.MsgType, b.Content, Flatten(b.MsgType, b.Content)
		m.Edits++
		m.History = append(m.History, m.Text)
		s.bodies[m.ID] = msgBody{msgType: b.MsgType, content: b.Content}
		writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"message_id": m.ID}})
	}
}

// handleRecall withdraws a message the bot sent (DELETE /open-apis/im/v1/messages/{id}).
func (s *Server) handleRecall(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byID[r.PathValue("id")]
	if !ok || m.Recalled {
		apiError(w, http.StatusBadRequest, CodeRecalled, "the message was withdrawn or does not exist")
		return
	}
	m.Recalled = true
	delete(s.bodies, m.ID)
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{}})
}

// Recall withdraws a message the bot sent, as a user with the right to do so would; later
// edits of it are refused with CodeRecalled.
func (s *Server) Recall(messageID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.byID[messageID]; ok {
		m.Recalled = true
		delete(s.bodies, messageID)
	}
}

// SetEdits sets how often message id counts as edited (to bring it to the edit limit).
func (s *Server) SetEdits(messageID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.byID[messageID]; ok {
		m.Edits = n
	}
}

// Age makes message id look sent d earlier (to put it past the edit window).
func (s *Server) Age(messageID string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.byID[messageID]; ok {
		m.Created = m.Created.Add(-d)
	}
}

// msgBody is a message as GET /open-apis/im/v1/messages/{id} returns it.
type msgBody struct {
	msgType, content string
	mentions         []Mention
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	body, ok := s.bodies[id]
	chat := s.msgChat[id]
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusBadRequest, 230011, "the message was withdrawn or does not exist")
		return
	}
	var mentions []map[string]string
	for i, m := range body.mentions {
		key := m.Key
		if key == "" {
			key = "@_user_" + strconv.Itoa(i+1)
		}
		mentions = append(mentions, map[string]string{"key": key, "id": m.OpenID, "id_type": "open_id", "name": m.Name})
	}
	writeJSON(w, http.StatusOK, map[string]any{"code": 0, "msg": "success", "data": map[string]any{"items": []any{map[string]any{
		"message_id": id, "chat_id": chat, "msg_type": body.msgType, "body": map[string]string{"content": body.content},
		"mentions": mentions,
	}}}})
}

// Flatten renders a message content (text or post, sent or received form) as plain text:
// text elements, md elements, links and mentions, one line per paragraph.
func Flatten(msgType, content string) string {
	switch msgType {
	case "text":
		var c struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal([]byte(content), &c)
		return c.Text
	case "post":
		type elem struct {
			Tag, Text, Href string
			UserName        string `json:"user_name"`
		}
		type body struct {
			Title   string   `json:"title"`
			Content [][]elem `json:"content"`
		}
		var p body
		if json.Unmarshal([]byte(content), &p); p.Title == "" && p.Content == nil {
			var langs map[string]body
			_ = json.Unmarshal([]byte(content), &langs)
			for _, l := range []string{"zh_cn", "en_us", "ja_jp"} {
				if v, ok := langs[l]; ok {
					p = v
					break
				}
			}
		}
		var lines []string
		if p.Title != "" {
			lines = append(lines, p.Title)
		}
		for _, para := range p.Content {
			var sb strings.Builder
			for _, e := range para {
				switch e.Tag {
				case "at":
					sb.WriteString("@" + e.UserName)
				case "a":
					sb.WriteString(e.Text)
				default:
					sb.WriteString(e.Text)
				}
			}
			lines = append(lines, sb.String())
		}
		return strings.Join(lines, "\n")
	}
	return ""
}
