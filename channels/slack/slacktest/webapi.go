package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Slack's limits the fake enforces.
const (
	MaxText        = 40000 // characters of a message's text
	MaxBlocks      = 50
	PostBurst      = 5 // chat.postMessage per channel: a burst, then one a second
	UpdatePerMin   = 50
	maxRequestBody = 1 << 20
	// MaxMetadata bounds a message's metadata (JSON bytes): past it Slack answers
	// metadata_too_large (the fake's bound; Slack documents the error, not the number).
	MaxMetadata = 8 << 10
)

// tiers are the per-workspace rate tiers of the methods the fake limits: calls a minute,
// taken as a burst of that size (Tier 3: 50, Tier 4: 100). chat.postMessage has its own
// per-channel limit (PostBurst); apps.connections.open and auth.test are not limited.
var tiers = map[string]int{
	"chat.update": UpdatePerMin, "chat.delete": 50, "reactions.add": 50,
	"conversations.history": 50, "conversations.replies": 50, "assistant.threads.setStatus": 50,
	"files.getUploadURLExternal": 100, "files.completeUploadExternal": 100,
}

// params reads a Web API request's arguments and token: a form (token field or Bearer) or a
// JSON body (Bearer).
func params(r *http.Request) (url.Values, string, error) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		return nil, "", err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	v := url.Values{}
	if ct == "application/json" {
		var m map[string]any
		if len(body) > 0 {
			if err := json.Unmarshal(body, &m); err != nil {
				return nil, "", err
			}
		}
		for k, x := range m {
			switch x := x.(type) {
			case string:
				v.Set(k, x)
			default:
				raw, _ := json.Marshal(x)
				v.Set(k, string(raw))
			}
		}
	} else {
		if v, err = url.ParseQuery(string(body)); err != nil {
			return nil, "", err
		}
		for k, x := range r.URL.Query() {
			v[k] = x
		}
	}
	if t := v.Get("token"); t != "" && token == "" {
		token = t
	}
	return v, token, nil
}

func reply(w http.ResponseWriter, body map[string]any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(body)
}

func fail(w http.ResponseWriter, code string) { reply(w, map[string]any{"ok": false, "error": code}) }

// api serves /api/{method}.
func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	v, token, err := params(r)
	if err != nil {
		fail(w, "invalid_form_data")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	if n := s.force429[method]; n > 0 {
		s.force429[method] = n - 1
		tooMany(w, time.Second)
		return
	}
	if n := s.lose[method]; n > 0 {
		s.lose[method] = n - 1
		defer hangUp(w) // the call is carried out, its answer lost (runs after s.call's answer is discarded)
		w = discard{w.Header().Clone()}
	}
	if method == "apps.connections.open" {
		s.openConnection(w, token)
		return
	}
	if token == s.cfg.AppToken {
		fail(w, "not_allowed_token_type")
		return
	}
	if token != s.cfg.BotToken {
		fail(w, "invalid_auth")
		return
	}
	if n := tiers[method]; n > 0 {
		if wait := s.take("tier:"+method, n, float64(n)/60); wait > 0 {
			tooMany(w, wait)
			return
		}
	}
	switch method {
	case "auth.test":
		w.Header().Set("X-OAuth-Scopes", s.cfg.Scopes)
		reply(w, map[string]any{"ok": true, "url": "https://fake.slack.com/", "team": "Fake", "user": "reef",
			"team_id": s.cfg.TeamID, "user_id": s.cfg.BotUserID, "bot_id": "BFAKE"})
	case "chat.postMessage":
		s.postMessage(w, v)
	case "chat.update":
		s.update(w, v)
	case "conversations.history":
		s.history(w, v)
	case "conversations.replies":
		s.replies(w, v)
	case "chat.delete":
		s.delete(w, v)
	case "reactions.add":
		s.react(w, v)
	case "assistant.threads.setStatus":
		s.statuses = append(s.statuses, v.Get("channel_id")+"/"+v.Get("thread_ts")+": "+v.Get("status"))
		reply(w, map[string]any{"ok": true})
	case "files.getUploadURLExternal":
		s.uploadURL(w, v)
	case "files.completeUploadExternal":
		s.completeUpload(w, v)
	default:
		fail(w, "unknown_method")
	}
}

// discard is a ResponseWriter whose answer goes nowhere.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}

// hangUp closes the connection of w without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// tooMany answers 429 with Retry-After in whole seconds, as Slack does.
func tooMany(w http.ResponseWriter, after time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(after.Seconds()))))
	w.WriteHeader(http.StatusTooManyRequests)
}

func (s *Server) openConnection(w http.ResponseWriter, token string) {
	switch token {
	case s.cfg.AppToken:
	case s.cfg.BotToken:
		fail(w, "not_allowed_token_type")
		return
	default:
		fail(w, "invalid_auth")
		return
	}
	s.seq++
	ticket := strconv.FormatInt(s.seq, 10)
	s.tickets[ticket] = true
	reply(w, map[string]any{"ok": true, "url": "ws" + strings.TrimPrefix(s.URL, "http") + "/link/?ticket=" + ticket})
}

// messageText checks a message's text and blocks; it returns the Slack error or "".
func messageText(v url.Values) (string, string) {
	text := v.Get("text")
	if b := v.Get("blocks"); b != "" {
		var blocks []json.RawMessage
		if json.Unmarshal([]byte(b), &blocks) != nil || len(blocks) > MaxBlocks {
			return "", "invalid_blocks"
		}
		if text == "" && len(blocks) > 0 {
			text = b
		}
	}
	switch {
	case strings.TrimSpace(text) == "":
		return "", "no_text"
	case len([]rune(text)) > MaxText:
		return "", "msg_too_long"
	}
	return text, ""
}

func (s *Server) postMessage(w http.ResponseWriter, v url.Values) {
	ch := v.Get("channel")
	if ch == "" || s.gone[ch] {
		fail(w, "channel_not_found")
		return
	}
	text, bad := messageText(v)
	if bad != "" {
		fail(w, bad)
		return
	}
	meta, bad := metadataOf(v)
	if bad != "" {
		fail(w, bad)
		return
	}
	if wait := s.take("post:"+ch, PostBurst, 1); wait > 0 {
		tooMany(w, wait)
		return
	}
	thread := v.Get("thread_ts")
	if thread != "" && s.byTS[ch+"/"+thread] == nil {
		fail(w, "thread_not_found")
		return
	}
	m := &Message{TS: s.nextTS(), Channel: ch, ThreadTS: thread, User: s.cfg.BotUserID, Text: text, Bot: true, Metadata: meta}
	if b := v.Get("blocks"); b != "" {
		m.Blocks = json.RawMessage(b)
	}
	s.record(m)
	if s.cfg.OnSend != nil {
		s.cfg.OnSend(ch, m.TS, text)
	}
	reply(w, map[string]any{"ok": true, "channel": ch, "ts": m.TS, "message": s.wire(m, true)})
}

// own finds a message of the bot for update and delete; it answers the error itself.
func (s *Server) own(w http.ResponseWriter, v url.Values, notMine string) *Message {
	ch, ts := v.Get("channel"), v.Get("ts")
	if s.gone[ch] {
		fail(w, "channel_not_found")
		return nil
	}
	m := s.byTS[ch+"/"+ts]
	switch {
	case m == nil || m.Deleted:
		fail(w, "message_not_found")
		return nil
	case !m.Bot:
		fail(w, notMine)
		return nil
	}
	return m
}

func (s *Server) update(w http.ResponseWriter, v url.Values) {
	m := s.own(w, v, "cant_update_message")
	if m == nil {
		return
	}
	text, bad := messageText(v)
	if bad != "" {
		fail(w, bad)
		return
	}
	meta, bad := metadataOf(v)
	if bad != "" {
		fail(w, bad)
		return
	}
	if meta != nil { // chat.update keeps the metadata it is not given
		m.Metadata = meta
	}
	m.Text = text
	m.Edits++
	if s.cfg.OnSend != nil {
		s.cfg.OnSend(m.Channel, m.TS, text)
	}
	reply(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": text})
}

func (s *Server) delete(w http.ResponseWriter, v url.Values) {
	if m := s.own(w, v, "cant_delete_message"); m != nil {
		m.Deleted = true
		reply(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS})
	}
}

func (s *Server) react(w http.ResponseWriter, v url.Values) {
	m := s.byTS[v.Get("channel")+"/"+v.Get("timestamp")]
	switch {
	case m == nil:
		fail(w, "message_not_found")
		return
	case v.Get("name") == "":
		fail(w, "invalid_name")
		return
	}
	for _, r := range m.Reactions {
		if r == v.Get("name") {
			fail(w, "already_reacted")
			return
		}
	}
	m.Reactions = append(m.Reactions, v.Get("name"))
	reply(w, map[string]any{"ok": true})
}

// bucket is a token bucket: a burst of size, refilled at rate a second.
type bucket struct {
	tokens float64
	last   time.Time
}

// take spends one token of the bucket key; it returns how long to wait when there is none.
// s.mu is held.
func (s *Server) take(key string, size int, rate float64) time.Duration {
	now := time.Now()
	b := s.buckets[key]
	if b == nil {
		b = &bucket{tokens: float64(size), last: now}
		s.buckets[key] = b
	}
	b.tokens = math.Min(float64(size), b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / rate * float64(time.Second))
	}
	b.tokens--
	return 0
}

// upload is a file on its way in through the external upload flow.
type upload struct {
	name     string
	length   int
	data     []byte
	received bool
	done     bool
}

// Upload is a file the bot shared.
type Upload struct {
	Name, Channel, ThreadTS string
	Data                    []byte
}

func (s *Server) uploadURL(w http.ResponseWriter, v url.Values) {
	name := v.Get("filename")
	n, err := strconv.Atoi(v.Get("length"))
	if name == "" || err != nil || n <= 0 {
		fail(w, "invalid_arguments")
		return
	}
	s.seq++
	id := fmt.Sprintf("F%d", s.seq)
	s.files[id] = &upload{name: name, length: n}
	reply(w, map[string]any{"ok": true, "upload_url": s.URL + "/upload/" + id, "file_id": id})
}

// receiveUpload takes the file's bytes (multipart field "file", or the raw body).
func (s *Server) receiveUpload(w http.ResponseWriter, r *http.Request) {
	data, err := readUpload(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.files[r.PathValue("id")]
	switch {
	case u == nil:
		http.Error(w, "no such upload", http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		u.data, u.received = data, true
		fmt.Fprintf(w, "OK - %d", len(data))
	}
}

func readUpload(r *http.Request) ([]byte, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return io.ReadAll(r.Body)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, fmt.Errorf("no file part: %w", err)
		}
		if p.FormName() == "file" {
			return io.ReadAll(p)
		}
		_ = p.Close()
	}
}

func (s *Server) completeUpload(w http.ResponseWriter, v url.Values) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if json.Unmarshal([]byte(v.Get("files")), &files) != nil || len(files) == 0 {
		fail(w, "invalid_arguments")
		return
	}
	ch, thread := v.Get("channel_id"), v.Get("thread_ts")
	if ch != "" && s.gone[ch] {
		fail(w, "channel_not_found")
		return
	}
	var out []map[string]any
	m := &Message{TS: s.nextTS(), Channel: ch, ThreadTS: thread, User: s.cfg.BotUserID, Bot: true}
	for _, f := range files {
		u := s.files[f.ID]
		switch {
		case u == nil || u.done:
			fail(w, "file_not_found")
			return
		case !u.received || len(u.data) != u.length:
			fail(w, "file_upload_size_mismatch")
			return
		}
		u.done = true
		m.Files = append(m.Files, u.name)
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	if ch != "" {
		s.record(m)
	}
	reply(w, map[string]any{"ok": true, "files": out})
}

// Uploads returns the files the bot shared in chatID, with their bytes.
func (s *Server) Uploads(chatID string) []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Upload
	for _, m := range s.msgs[chatID] {
		if !m.Bot {
			continue
		}
		for _, name := range m.Files {
			for _, u := range s.files {
				if u.done && u.name == name {
					out = append(out, Upload{Name: name, Channel: chatID, ThreadTS: m.ThreadTS, Data: u.data})
					break
				}
			}
		}
	}
	return out
}

// FileSpec is a file a person shares with a message.
type FileSpec struct {
	Name, Mimetype string
	Data           []byte
}

type privateFile struct {
	mimetype string
	data     []byte
}

// sharePrivate serves f at a url_private on the fake and returns the file object of the
// event. s.mu is held.
func (s *Server) sharePrivate(f FileSpec) map[string]any {
	s.seq++
	id := fmt.Sprintf("F%d", s.seq)
	path := s.cfg.TeamID + "-" + id + "/" + url.PathEscape(f.Name)
	s.private[path] = privateFile{mimetype: f.Mimetype, data: f.Data}
	u := s.URL + "/files-pri/" + path
	return map[string]any{"id": id, "name": f.Name, "mimetype": f.Mimetype, "size": len(f.Data),
		"url_private": u, "url_private_download": u + "?download=1", "mode": "hosted"}
}

// servePrivate serves a url_private to the bot token; anyone else is sent to the sign-in page.
func (s *Server) servePrivate(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.private[r.PathValue("path")]
	auth := r.Header.Get("Authorization") == "Bearer "+s.cfg.BotToken
	s.mu.Unlock()
	switch {
	case !auth:
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
	case !ok:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", f.mimetype)
		_, _ = w.Write(f.data)
	}
}
