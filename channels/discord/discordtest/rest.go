package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Routes, for FailNext. Paths are relative to /api/v9.
const (
	RouteGateway    = "GET /gateway"
	RouteGatewayBot = "GET /gateway/bot"
	RouteMe         = "GET /users/@me"
	RouteCreateDM   = "POST /users/@me/channels"
	RouteChannel    = "GET /channels/{id}"
	RouteSend       = "POST /channels/{id}/messages"
	RouteEdit       = "PATCH /channels/{id}/messages/{mid}"
	RouteDelete     = "DELETE /channels/{id}/messages/{mid}"
	RouteHistory    = "GET /channels/{id}/messages"
	RouteTyping     = "POST /channels/{id}/typing"
	RouteReact      = "PUT /channels/{id}/messages/{mid}/reactions/{emoji}/@me"
)

// MaxMessage is the longest message content Discord accepts, in code points.
const MaxMessage = 2000

func (s *Server) routes(mux *http.ServeMux) {
	handlers := map[string]http.HandlerFunc{
		RouteGateway:    s.getGateway,
		RouteGatewayBot: s.getGatewayBot,
		RouteMe:         s.getMe,
		RouteCreateDM:   s.createDM,
		RouteChannel:    s.getChannel,
		RouteSend:       s.postMessage,
		RouteEdit:       s.patchMessage,
		RouteDelete:     s.deleteMessage,
		RouteHistory:    s.getMessages,
		RouteTyping:     s.postTyping,
		RouteReact:      s.putReaction,
	}
	for route, h := range handlers {
		method, path, _ := cut(route)
		mux.Handle(method+" /api/v9"+path, s.wrap(route, h))
	}
}

func cut(route string) (method, path string, ok bool) {
	for i := 0; i < len(route); i++ {
		if route[i] == ' ' {
			return route[:i], route[i+1:], true
		}
	}
	return "", route, false
}

// wrap records the request, checks the token and plays failures queued by FailNext.
func (s *Server) wrap(route string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		var f *failure
		if q := s.failures[route]; len(q) > 0 {
			if q[0].after > 0 {
				q[0].after--
			} else {
				f = &q[0]
				s.failures[route] = q[1:]
			}
		}
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Bot "+s.cfg.Token {
			apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
			return
		}
		if f != nil {
			writeFailure(w, *f)
			return
		}
		h(w, r)
	})
}

func (s *Server) getGateway(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, 200, map[string]any{"url": s.WSURL})
}

func (s *Server) botUser() map[string]any {
	return map[string]any{"id": s.cfg.BotID, "username": s.cfg.BotName, "bot": true, "discriminator": "0"}
}

func (s *Server) getMe(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, s.botUser()) }

func (s *Server) createDM(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.RecipientID == "" {
		apiError(w, 400, 50035, "Invalid Form Body")
		return
	}
	s.mu.Lock()
	c := Channel{ID: "dm-" + req.RecipientID, Type: TypeDM}
	s.channels[c.ID] = c
	s.mu.Unlock()
	writeJSON(w, 200, c)
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, ok := s.channels[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, 200, c)
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content         string          `json:"content"`
		AllowedMentions json.RawMessage `json:"allowed_mentions"`
		Nonce           json.RawMessage `json:"nonce"`
		EnforceNonce    bool            `json:"enforce_nonce"`
		Reference       *struct {
			MessageID       string `json:"message_id"`
			FailIfNotExists *bool  `json:"fail_if_not_exists"`
		} `json:"message_reference"`
	}
	files, status, msg := readSend(r, &req)
	switch status {
	case 0:
	case http.StatusRequestEntityTooLarge:
		apiError(w, status, 40005, msg)
		return
	default:
		apiError(w, status, 50109, msg)
		return
	}
	switch n := utf8.RuneCountInString(req.Content); {
	case n == 0 && len(files) == 0:
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	case n > MaxMessage:
		apiError(w, 400, 50035, "Invalid Form Body: content: Must be 2000 or fewer in length.")
		return
	}
	channelID := r.PathValue("id")
	s.mu.Lock()
	nonceKey := channelID + "\x00" + string(req.Nonce)
	if n, ok := s.nonces[nonceKey]; ok && req.EnforceNonce && len(req.Nonce) > 0 && time.Since(n.at) < s.cfg.NonceWindow {
		wire := s.wireLocked(s.messages[n.id]) // Discord answers with the message made then
		s.mu.Unlock()
		writeJSON(w, 200, wire)
		return
	}
	m := &Message{ID: s.newID(), ChannelID: channelID, AuthorID: s.cfg.BotID, AuthorName: s.cfg.BotName,
		AuthorBot: true, Content: req.Content, Time: time.Now().UTC()}
	if c, ok := s.channels[channelID]; ok {
		m.GuildID = c.GuildID
	} else {
		s.channels[channelID] = Channel{ID: channelID, Type: TypeDM}
	}
	if ref := req.Reference; ref != nil {
		if _, ok := s.messages[ref.MessageID]; !ok && (ref.FailIfNotExists == nil || *ref.FailIfNotExists) {
			s.mu.Unlock()
			apiError(w, 400, 50035, "Invalid Form Body: message_reference: Unknown message")
			return
		}
		m.ReplyTo = ref.MessageID
	}
	for name := range files {
		m.Attachments = append(m.Attachments, name)
	}
	if len(files) > 0 {
		if s.uploads == nil {
			s.uploads = map[string]map[string][]byte{}
		}
		s.uploads[m.ID] = files
	}
	s.messages[m.ID] = m
	s.first[m.ID] = m.Content
	s.sent[channelID] = append(s.sent[channelID], m.ID)
	s.mentions[m.ID] = append(s.mentions[m.ID], string(req.AllowedMentions))
	if req.EnforceNonce && len(req.Nonce) > 0 {
		s.nonces[nonceKey] = nonceMark{id: m.ID, at: time.Now()}
	}
	wire := s.wireLocked(m)
	s.mu.Unlock()
	s.gw.dispatch("MESSAGE_CREATE", wire, m.GuildID)
	writeJSON(w, 200, wire)
}

func (s *Server) patchMessage(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content         *string         `json:"content"`
		AllowedMentions json.RawMessage `json:"allowed_mentions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("mid")]
	switch {
	case !ok || m.ChannelID != r.PathValue("id") || m.Deleted:
		apiError(w, 404, 10008, "Unknown Message")
	case m.AuthorID != s.cfg.BotID:
		apiError(w, 403, 50005, "Cannot edit a message authored by another user")
	case req.Content != nil && utf8.RuneCountInString(*req.Content) > MaxMessage:
		apiError(w, 400, 50035, "Invalid Form Body: content: Must be 2000 or fewer in length.")
	default:
		if req.Content != nil {
			m.Content = *req.Content
			s.edits[m.ID] = append(s.edits[m.ID], m.Content)
		}
		s.mentions[m.ID] = append(s.mentions[m.ID], string(req.AllowedMentions))
		writeJSON(w, 200, s.wireLocked(m))
	}
}

func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("mid")]
	switch {
	case !ok || m.ChannelID != r.PathValue("id") || m.Deleted:
		apiError(w, 404, 10008, "Unknown Message")
	case m.AuthorID != s.cfg.BotID:
		apiError(w, 403, 50013, "Missing Permissions")
	default:
		m.Deleted = true
		w.WriteHeader(http.StatusNoContent)
	}
}

// getMessages answers GET /channels/{id}/messages?after=&limit= as Discord does: at most
// limit (default 50, at most 100) messages newer than after, newest first.
func (s *Server) getMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	limit := 50
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n >= 1 && n <= 100 {
		limit = n
	}
	channelID := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[channelID]; !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	var ids []int64
	for id, m := range s.messages {
		n, _ := strconv.ParseInt(id, 10, 64)
		if m.ChannelID == channelID && !m.Deleted && n > after {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids) // the oldest after `after` first, as Discord picks them
	ids = ids[:min(len(ids), limit)]
	out := []map[string]any{}
	for i := len(ids) - 1; i >= 0; i-- {
		out = append(out, s.wireLocked(s.messages[strconv.FormatInt(ids[i], 10)]))
	}
	s.history++
	writeJSON(w, 200, out)
}

func (s *Server) postTyping(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.typing[r.PathValue("id")]++
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// wireLocked renders m as Discord's message object. Callers hold s.mu.
func (s *Server) wireLocked(m *Message) map[string]any {
	w := s.wireMessage(m)
	if ref, ok := s.messages[m.ReplyTo]; ok {
		w["type"] = 19
		w["message_reference"] = map[string]any{"message_id": ref.ID, "channel_id": ref.ChannelID, "guild_id": ref.GuildID}
		w["referenced_message"] = s.wireMessage(ref)
	}
	return w
}

func (s *Server) wireMessage(m *Message) map[string]any {
	author := map[string]any{"id": m.AuthorID, "username": m.AuthorName, "bot": m.AuthorBot, "discriminator": "0"}
	if m.GlobalName != "" {
		author["global_name"] = m.GlobalName
	}
	mentions := []map[string]any{}
	for _, id := range m.Mentions {
		if id == s.cfg.BotID {
			mentions = append(mentions, s.botUser())
		} else {
			mentions = append(mentions, map[string]any{"id": id, "username": "user-" + id})
		}
	}
	w := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "author": author, "content": m.Content,
		"timestamp": m.Time.Format(time.RFC3339Nano), "type": 0, "mentions": mentions,
	}
	if m.GuildID != "" {
		w["guild_id"] = m.GuildID
	}
	var files []map[string]any
	for i, a := range m.Attachments {
		name, ctype, _ := strings.Cut(a, "|")
		size, url := 1024, "https://cdn.discordapp.com/attachments/"+m.ChannelID+"/"+name
		if data, ok := s.files[name]; ok { // AddFile: served by this fake
			size, url = len(data), s.attachmentURL(m.ChannelID, name)
		}
		files = append(files, map[string]any{"id": fmt.Sprintf("%s%d", m.ID, i), "filename": name, "content_type": ctype,
			"size": size, "url": url})
	}
	if files != nil {
		w["attachments"] = files
	}
	return w
}

// putReaction adds the bot's reaction (a Unicode emoji, URL-encoded in the path) to a message
// of the channel: 204, or 404 Unknown Message.
func (s *Server) putReaction(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[r.PathValue("mid")]
	emoji := r.PathValue("emoji")
	switch {
	case !ok || m.ChannelID != r.PathValue("id") || m.Deleted:
		apiError(w, 404, 10008, "Unknown Message")
	case emoji == "":
		apiError(w, 400, 10014, "Unknown Emoji")
	default:
		s.reactions[m.ID] = append(s.reactions[m.ID], emoji)
		w.WriteHeader(http.StatusNoContent)
	}
}
