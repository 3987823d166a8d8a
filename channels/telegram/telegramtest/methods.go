package telegramtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mymmrac/telego"
)

// serve routes POST /bot<token>/<method>.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeErr(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	if token != s.token {
		writeErr(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxFileUpload+1<<20))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "Bad Request: can't read the request body", 0)
		return
	}
	s.mu.Lock()
	s.calls[method]++
	onCall := s.onCall
	var f *failure
	if code, ok := s.down[method]; ok {
		f = &failure{code: code, description: defaultDescription(code, 0)}
	} else if q := s.fail[method]; len(q) > 0 {
		if q[0].after > 0 {
			q[0].after--
		} else {
			f = &q[0]
			s.fail[method] = q[1:]
		}
	}
	s.mu.Unlock()
	if onCall != nil {
		onCall(method)
	}
	if f != nil {
		writeErr(w, f.code, f.description, f.retryAfter)
		return
	}
	handlers := map[string]func(http.ResponseWriter, *http.Request, []byte){
		"getMe":              s.getMe,
		"getUpdates":         s.getUpdates,
		"sendMessage":        s.sendMessage,
		"editMessageText":    s.editMessageText,
		"sendChatAction":     s.sendChatAction,
		"deleteMessage":      s.deleteMessage,
		"setMessageReaction": s.setMessageReaction,
		"setWebhook":         s.setWebhook,
		"deleteWebhook":      s.deleteWebhook,
		"getFile":            s.getFile,
		"sendPhoto":          s.sendFile("photo"),
		"sendDocument":       s.sendFile("document"),
		"sendVoice":          s.sendFile("voice"),
		"sendVideo":          s.sendFile("video"),
	}
	h, ok := handlers[method]
	if !ok {
		writeErr(w, http.StatusNotFound, "Not Found: method not found", 0)
		return
	}
	h(w, r, body)
}

// decode reads a JSON request body ("null" or empty for methods without parameters).
func decode(w http.ResponseWriter, body []byte, v any) bool {
	if len(body) == 0 || string(body) == "null" {
		return true
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeErr(w, http.StatusBadRequest, "Bad Request: invalid JSON: "+err.Error(), 0)
		return false
	}
	return true
}

func writeOK(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeErr(w http.ResponseWriter, code int, description string, retryAfter int) {
	resp := map[string]any{"ok": false, "error_code": code, "description": description}
	if retryAfter > 0 {
		resp["parameters"] = map[string]int{"retry_after": retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(resp)
}

func (s *Server) getMe(w http.ResponseWriter, _ *http.Request, _ []byte) { writeOK(w, s.bot) }

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, body []byte) {
	var p telego.GetUpdatesParams
	if !decode(w, body, &p) {
		return
	}
	limit := p.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	var timeout <-chan time.Time
	if p.Timeout > 0 {
		t := time.NewTimer(time.Duration(p.Timeout) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	s.mu.Lock()
	if s.dropArmed {
		s.dropArmed = false
		s.mu.Unlock()
		writeErr(w, http.StatusBadGateway, "Bad Gateway", 0)
		return
	}
	if s.webhookURL != "" {
		s.mu.Unlock()
		writeErr(w, http.StatusConflict, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first", 0)
		return
	}
	if p.AllowedUpdates != nil {
		s.allowed = p.AllowedUpdates
	}
	s.confirm(p.Offset)
	for {
		if len(s.updates) > 0 || timeout == nil {
			batch := append([]telego.Update{}, s.updates[:min(limit, len(s.updates))]...)
			s.mu.Unlock()
			writeOK(w, batch)
			return
		}
		notify, drop := s.notify, s.drop
		s.mu.Unlock()
		select {
		case <-notify:
		case <-drop:
			s.mu.Lock()
			armed := s.dropArmed
			s.dropArmed = false
			s.mu.Unlock()
			if armed {
				closeConnection(w)
				return
			}
		case <-timeout:
			timeout = nil
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
		s.mu.Lock()
	}
}

// confirm drops the updates an offset confirms; s.mu is held.
func (s *Server) confirm(offset int) {
	switch {
	case offset > 0:
		s.confirmed = max(s.confirmed, offset)
		i := 0
		for i < len(s.updates) && s.updates[i].UpdateID < offset {
			i++
		}
		s.updates = s.updates[i:]
	case offset < 0: // the last -offset updates; all before are forgotten
		if n := len(s.updates) + offset; n > 0 {
			s.updates = s.updates[n:]
		}
	}
}

// closeConnection closes the client's connection without a response.
func closeConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// chatID parses a chat_id (integer, or a string of digits).
func chatID(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(string(raw), `"`)
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id != 0
}

func formatID(id int64) string { return strconv.FormatInt(id, 10) }
