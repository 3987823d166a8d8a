package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// maxRetries is how often Slack sends an unacknowledged event again.
const maxRetries = 3

// envelope is one events_api envelope on its way to the bot.
type envelope struct {
	seq     int64 // the order envelopes were made in
	id      string
	kind    string // events_api | slash_commands | interactive
	payload json.RawMessage
	retry   int
	reason  string
	sentAt  time.Time
	on      *wsConn // the socket it was last sent on
}

// wsConn is one Socket Mode connection.
type wsConn struct {
	ws       *websocket.Conn
	wmu      sync.Mutex
	draining bool // a disconnect was sent: nothing new goes out on it
	once     sync.Once
	done     chan struct{}
}

func (c *wsConn) write(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

func (c *wsConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

// emit sends an inner event to the bot: by HTTP in Events API mode, else as an envelope on
// the socket (queued while there is none). s.mu is held.
func (s *Server) emit(ev map[string]any) {
	payload := s.callback(ev)
	if s.cfg.EventsURL != "" {
		s.delivery.Add(1)
		go s.postEvent(payload)
		return
	}
	s.seq++
	env := &envelope{seq: s.seq, id: fmt.Sprintf("env-%d", s.seq), kind: "events_api", payload: payload}
	s.pending[env.id] = env
	s.sendLocked(env)
}

// SlashCommand makes user run the app's slash command (e.g. "/stop") with text in channel: a
// slash_commands envelope over Socket Mode.
func (s *Server) SlashCommand(channel, user, command, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	payload, _ := json.Marshal(map[string]any{"token": "unused", "team_id": s.cfg.TeamID, "channel_id": channel,
		"user_id": user, "user_name": "user-" + user, "command": command, "text": text,
		"trigger_id": fmt.Sprintf("trig-%d", s.seq), "response_url": s.URL + "/commands/respond", "api_app_id": "AFAKE"})
	env := &envelope{seq: s.seq, id: fmt.Sprintf("env-%d", s.seq), kind: "slash_commands", payload: payload}
	s.pending[env.id] = env
	s.sendLocked(env)
}

// Press makes user press the button labelled label on the bot's message ts in channel: a
// block_actions interaction over Socket Mode, as an app with Interactivity on gets it. It
// fails when the message has no such button.
func (s *Server) Press(channel, ts, user, label string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byTS[channel+"/"+ts]
	if m == nil || m.Deleted || m.Blocks == nil {
		return fmt.Errorf("slacktest: no message with blocks at %s/%s", channel, ts)
	}
	var blocks []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		return fmt.Errorf("slacktest: blocks: %w", err)
	}
	for _, b := range blocks {
		for _, e := range b.Elements {
			if b.Type != "actions" || e.Type != "button" || e.Text.Text != label {
				continue
			}
			s.seq++
			now := fmt.Sprintf("%d.%06d", time.Now().Unix(), s.seq%1_000_000)
			container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": channel, "is_ephemeral": false}
			if m.ThreadTS != "" {
				container["thread_ts"] = m.ThreadTS
			}
			payload, _ := json.Marshal(map[string]any{"type": "block_actions", "api_app_id": "AFAKE", "token": "unused",
				"trigger_id": fmt.Sprintf("trig-%d", s.seq), "team": map[string]any{"id": s.cfg.TeamID},
				"user":    map[string]any{"id": user, "name": "user-" + user, "team_id": s.cfg.TeamID},
				"channel": map[string]any{"id": channel}, "container": container,
				"message": s.wire(m, false), "response_url": s.URL + "/actions/respond",
				"actions": []map[string]any{{"type": "button", "action_id": e.ActionID, "block_id": b.BlockID,
					"value": e.Value, "text": map[string]any{"type": "plain_text", "text": label}, "action_ts": now}}})
			env := &envelope{seq: s.seq, id: fmt.Sprintf("env-%d", s.seq), kind: "interactive", payload: payload}
			s.pending[env.id] = env
			s.sendLocked(env)
			return nil
		}
	}
	return fmt.Errorf("slacktest: no button %q on %s/%s", label, channel, ts)
}

// sendLocked sends env on the current socket, or leaves it for the next one. s.mu is held.
func (s *Server) sendLocked(env *envelope) {
	c := s.conn
	if c == nil || c.draining {
		env.on = nil
		return
	}
	env.on, env.sentAt = c, time.Now()
	msg := map[string]any{"envelope_id": env.id, "type": env.kind, "payload": env.payload,
		"accepts_response_payload": false, "retry_attempt": env.retry, "retry_reason": env.reason}
	if err := c.write(msg); err != nil {
		env.on = nil
	}
}

// socket serves a Socket Mode WebSocket: the URL's ticket must come from
// apps.connections.open and is good once.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.tickets[ticket]
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	ws, err := (&websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	s.mu.Lock()
	s.conn = c
	s.conns++
	n := s.conns
	_ = c.write(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]any{"app_id": "AFAKE"},
		"debug_info": map[string]any{"host": "fake-" + strconv.Itoa(n), "approximate_connection_time": 18060}})
	for _, env := range s.inOrder() { // what the old sockets left unacknowledged goes out now
		s.retryLocked(env, "")
	}
	s.mu.Unlock()
	go s.ping(c)
	s.readAcks(c)
	c.close()
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
}

// inOrder returns the pending envelopes in the order they were made. s.mu is held.
func (s *Server) inOrder() []*envelope {
	out := make([]*envelope, 0, len(s.pending))
	for _, env := range s.pending {
		out = append(out, env)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// retryLocked sends env again: with the next retry_attempt when it was sent before (it is
// dropped after maxRetries), else for the first time. s.mu is held.
func (s *Server) retryLocked(env *envelope, reason string) {
	if !env.sentAt.IsZero() {
		if env.retry >= maxRetries {
			delete(s.pending, env.id)
			s.lost++
			return
		}
		env.retry++
		env.reason = reason
	}
	s.sendLocked(env)
}

// readAcks reads the bot's acks until the socket closes.
func (s *Server) readAcks(c *wsConn) {
	for {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if err := c.ws.ReadJSON(&ack); err != nil {
			return
		}
		s.mu.Lock()
		if _, ok := s.pending[ack.EnvelopeID]; ok {
			delete(s.pending, ack.EnvelopeID)
			s.acked++
		} else {
			s.badAcks++
		}
		s.mu.Unlock()
	}
}

func (s *Server) ping(c *wsConn) {
	t := time.NewTicker(s.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-s.closed:
			return
		case <-t.C:
			c.wmu.Lock()
			err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second))
			c.wmu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// redeliverLoop sends again the envelopes not acknowledged within AckTimeout, and those
// whose socket closed (once a new one is open).
func (s *Server) redeliverLoop() {
	t := time.NewTicker(s.cfg.AckTimeout / 5)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case now := <-t.C:
			s.mu.Lock()
			for _, env := range s.inOrder() {
				switch {
				case env.on == nil && s.conn != nil && !s.conn.draining:
					s.retryLocked(env, "")
				case env.on != nil && now.Sub(env.sentAt) > s.cfg.AckTimeout:
					s.retryLocked(env, "timeout")
				}
			}
			s.mu.Unlock()
		}
	}
}

// Disconnect sends a disconnect envelope with reason (refresh_requested, link_disabled,
// warning, …) on the current socket: the fake sends nothing more on it and closes it after
// grace, as Slack does; envelopes meanwhile wait for the bot's next socket.
func (s *Server) Disconnect(reason string, grace time.Duration) {
	s.mu.Lock()
	c := s.conn
	if c == nil {
		s.mu.Unlock()
		return
	}
	c.draining = true
	_ = c.write(map[string]any{"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "fake"}})
	s.mu.Unlock()
	go func() {
		select {
		case <-time.After(grace):
		case <-c.done:
		}
		c.close()
	}()
}

// Drop closes the bot's socket at once (channeltest.Platform).
func (s *Server) Drop() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// postEvent delivers one event callback to the bot's Events API endpoint, signed, and retries
// it (X-Slack-Retry-Num, X-Slack-Retry-Reason) while the answer is not 200 within 3 s.
func (s *Server) postEvent(payload json.RawMessage) {
	defer s.delivery.Done()
	client := &http.Client{Timeout: 3 * time.Second}
	for attempt := 0; attempt <= maxRetries; attempt++ {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		req, _ := http.NewRequest(http.MethodPost, s.cfg.EventsURL, bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", Sign(s.cfg.SigningSecret, ts, payload))
		if attempt > 0 {
			req.Header.Set("X-Slack-Retry-Num", strconv.Itoa(attempt))
			req.Header.Set("X-Slack-Retry-Reason", "http_error")
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.mu.Lock()
				s.acked++
				s.mu.Unlock()
				return
			}
		}
		select {
		case <-s.closed:
			return
		case <-time.After(time.Duration(attempt+1) * 300 * time.Millisecond):
		}
	}
	s.mu.Lock()
	s.lost++
	s.mu.Unlock()
}

// Sign is the X-Slack-Signature of body sent at timestamp ts (seconds) with secret:
// v0=hex(HMAC-SHA256(secret, "v0:" + ts + ":" + body)).
func Sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
