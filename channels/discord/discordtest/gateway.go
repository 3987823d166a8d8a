package discordtest

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// gateway is the fake gateway WebSocket. All writes happen under mu, so dispatches reach a
// connection in sequence order.
type gateway struct {
	srv      *Server
	upgrader websocket.Upgrader

	mu         sync.Mutex
	conns      map[*gwConn]bool
	sessions   map[string]*gwSession
	active     map[shardKey]*gwSession // the latest identified session of each shard; dispatches go to them
	lim        limits                  // sharding and identify limits (shards.go)
	reject     int                     // close code every later IDENTIFY/RESUME gets (set by a fatal CloseWith)
	identifies []Identify
	resumes    int
	replayed   int
	heartbeats int
	stalled    bool // do not acknowledge heartbeats
	nsession   int
	invalid    int  // sessions the client's close code (1000, 1001) invalidated
	missed     int  // dispatches sent while the bot had no session: never replayed
	resumesAt  int  // RESUMEs received on the resume_gateway_url listener
	hold       bool // leave IDENTIFYs unanswered (HoldIdentify)
	held       []heldIdentify
}

type heldIdentify struct {
	c   *gwConn
	raw json.RawMessage
}

type gwConn struct {
	ws       *websocket.Conn
	compress bool
	session  *gwSession
	onResume bool // connected through the resume_gateway_url listener
	shut     bool // the server closed it (closeWith): the client's close frame no longer counts
}

type gwSession struct {
	id    string
	shard shardKey
	seq   int64
	log   []frame // replayable dispatches
	conn  *gwConn // live connection, nil while disconnected
}

// frame is one gateway payload.
type frame struct {
	Op int    `json:"op"`
	D  any    `json:"d"`
	S  *int64 `json:"s,omitempty"`
	T  string `json:"t,omitempty"`
}

// Identify is what a client sent in an IDENTIFY.
type Identify struct {
	Token    string  `json:"token"`
	Intents  int     `json:"intents"`
	Compress bool    `json:"compress"`
	Shard    *[2]int `json:"shard,omitempty"` // [shard_id, num_shards]; nil when not sent
}

func (g *gateway) init(s *Server) {
	g.srv = s
	g.conns = map[*gwConn]bool{}
	g.sessions = map[string]*gwSession{}
	g.active = map[shardKey]*gwSession{}
	g.lim.init(s.cfg)
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &gwConn{ws: ws}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && g.srv.resume != nil {
		c.onResume = addr.String() == g.srv.resume.Listener.Addr().String()
	}
	g.mu.Lock()
	g.conns[c] = true
	g.write(c, frame{Op: 10, D: map[string]any{"heartbeat_interval": g.srv.cfg.HeartbeatInterval.Milliseconds()}})
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.conns, c)
		if c.session != nil && c.session.conn == c {
			c.session.conn = nil
		}
		g.mu.Unlock()
		ws.Close()
	}()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			g.closed(c, err)
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(data, &p) != nil {
			g.closeWith(c, 4002, "Decode error")
			return
		}
		g.mu.Lock()
		switch p.Op {
		case 1:
			g.heartbeats++
			if !g.stalled {
				g.write(c, frame{Op: 11})
			}
		case 2:
			if g.hold {
				g.held = append(g.held, heldIdentify{c, p.D})
			} else {
				g.identify(c, p.D)
			}
		case 6:
			g.resume(c, p.D)
		}
		g.mu.Unlock()
	}
}

// closed notes how the client closed c: like Discord, a close frame with 1000 or 1001 ends
// the session, so that a later RESUME is refused (op 9) and the events meanwhile are lost.
func (g *gateway) closed(c *gwConn, err error) {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure && ce.Code != websocket.CloseGoingAway {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if sess := c.session; !c.shut && sess != nil && g.sessions[sess.id] == sess {
		delete(g.sessions, sess.id)
		if g.active[sess.shard] == sess {
			delete(g.active, sess.shard)
		}
		g.invalid++
	}
}

func (g *gateway) tokenOK(token string) bool {
	return strings.TrimPrefix(token, "Bot ") == g.srv.cfg.Token
}

// identify starts a new session. Callers hold g.mu.
func (g *gateway) identify(c *gwConn, raw json.RawMessage) {
	var id Identify
	_ = json.Unmarshal(raw, &id)
	g.identifies = append(g.identifies, id)
	switch {
	case g.reject != 0:
		g.closeWith(c, g.reject, closeText(g.reject))
		return
	case !g.tokenOK(id.Token):
		g.closeWith(c, 4004, closeText(4004))
		return
	case id.Intents&g.srv.cfg.DisallowedIntents != 0:
		g.closeWith(c, 4014, closeText(4014))
		return
	}
	key, code := g.admit(c, id.Shard)
	switch code {
	case 0:
	case -1:
		g.invalidSession(c)
		return
	case 4004: // out of session starts: Discord ends every session and resets the token
		g.reject = 4004
		for other := range g.conns {
			g.closeWith(other, 4004, closeText(4004))
		}
		return
	default:
		g.closeWith(c, code, closeText(code))
		return
	}
	c.compress = id.Compress
	g.nsession++
	sess := &gwSession{id: fmt.Sprintf("session-%d", g.nsession), conn: c, shard: key}
	g.sessions[sess.id] = sess
	g.active[key] = sess
	c.session = sess
	sess.seq++
	ready := map[string]any{
		"v": 9, "session_id": sess.id, "resume_gateway_url": g.srv.ResumeURL, "user": g.srv.botUser(),
		"guilds": []any{}, "private_channels": []any{}, "application": map[string]any{"id": g.srv.cfg.BotID},
	}
	if id.Shard != nil {
		ready["shard"] = *id.Shard
	}
	g.write(c, frame{Op: 0, T: "READY", S: ptr(sess.seq), D: ready})
}

// resume reattaches c to a session and replays what it missed. Callers hold g.mu.
func (g *gateway) resume(c *gwConn, raw json.RawMessage) {
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(raw, &r)
	g.resumes++
	if c.onResume {
		g.resumesAt++
	}
	if g.reject != 0 {
		g.closeWith(c, g.reject, closeText(g.reject))
		return
	}
	if !g.tokenOK(r.Token) {
		g.closeWith(c, 4004, closeText(4004))
		return
	}
	sess := g.sessions[r.SessionID]
	if sess == nil || sess != g.active[sess.shard] {
		g.write(c, frame{Op: 9, D: false}) // invalid session: the client must identify
		return
	}
	if sess.shard[1] < g.lim.shards {
		g.closeWith(c, 4011, closeText(4011))
		return
	}
	if old := sess.conn; old != nil && old != c {
		old.ws.Close()
	}
	for _, f := range sess.log {
		if *f.S > r.Seq {
			g.write(c, f)
			g.replayed++
		}
	}
	sess.seq++
	g.write(c, frame{Op: 0, T: "RESUMED", S: ptr(sess.seq), D: map[string]any{}})
	sess.conn, c.session = c, sess
}

// dispatch sends an event of guild ("" for none: a direct message) to the active session of
// the shard that owns it, recording it for replay.
func (g *gateway) dispatch(t string, d any, guild string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sent := false
	for key, sess := range g.active {
		if !routes(key, guild) {
			continue
		}
		sent = true
		sess.seq++
		f := frame{Op: 0, T: t, S: ptr(sess.seq), D: d}
		sess.log = append(sess.log, f)
		if sess.conn != nil {
			g.write(sess.conn, f)
		}
	}
	if !sent {
		g.missed++
	}
}

// write sends one payload; a failed write is noticed by the connection's reader. Callers hold g.mu.
func (g *gateway) write(c *gwConn, f frame) {
	data, err := json.Marshal(f)
	if err != nil {
		panic(err)
	}
	kind := websocket.TextMessage
	if c.compress {
		var buf bytes.Buffer
		z := zlib.NewWriter(&buf)
		z.Write(data)
		z.Close()
		data, kind = buf.Bytes(), websocket.BinaryMessage
	}
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	c.ws.WriteMessage(kind, data)
}

// closeWith sends a close frame with code and closes the socket. Callers hold g.mu.
func (g *gateway) closeWith(c *gwConn, code int, text string) {
	c.shut = true
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	c.ws.Close()
}

func closeText(code int) string {
	switch code {
	case 4004:
		return "Authentication failed."
	case 4010:
		return "Invalid shard."
	case 4011:
		return "Sharding required."
	case 4013:
		return "Invalid intent(s)."
	case 4014:
		return "Disallowed intent(s)."
	}
	return "closed"
}

// Fatal reports whether Discord's close code means reconnecting will not help.
func Fatal(code int) bool { return code == 4004 || (code >= 4010 && code <= 4014) }

// Drop kills every gateway socket without a close frame, as a network failure would. The
// session stays resumable and keeps recording dispatches.
func (s *Server) Drop() {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.conns {
		c.ws.Close()
	}
}

// CloseWith closes every gateway socket with a close code. A fatal code (4004, 4010–4014)
// sticks: every later IDENTIFY or RESUME is closed with it too.
func (s *Server) CloseWith(code int) {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	if Fatal(code) {
		g.reject = code
	}
	for c := range g.conns {
		g.closeWith(c, code, closeText(code))
	}
}

// Identifies returns how many IDENTIFYs the fake received.
func (s *Server) Identifies() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return len(s.gw.identifies)
}

// LastIdentify returns the latest IDENTIFY payload (token included).
func (s *Server) LastIdentify() Identify {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	if len(s.gw.identifies) == 0 {
		return Identify{}
	}
	return s.gw.identifies[len(s.gw.identifies)-1]
}

// Resumes returns how many RESUMEs the fake received.
func (s *Server) Resumes() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.resumes
}

// Stall stops (true) or resumes (false) acknowledging heartbeats, as a stuck gateway would:
// the client notices the missing acks and reconnects (discordgo closes with 1000 first, which
// ends the session: it must IDENTIFY again).
func (s *Server) Stall(on bool) {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.stalled = on
}

// ExpireSessions forgets every session and drops the sockets: the next RESUME is answered
// with op 9 (invalid session) and the client must IDENTIFY again.
func (s *Server) ExpireSessions() {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.sessions)
	clear(g.active)
	for c := range g.conns {
		c.ws.Close()
	}
}

// RequestReconnect sends op 7 (reconnect) on every live socket: the client should close it
// and RESUME on a new one.
func (s *Server) RequestReconnect() {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.conns {
		g.write(c, frame{Op: 7})
	}
}

// HoldIdentify leaves IDENTIFYs unanswered until ReleaseIdentify: meanwhile the bot has no
// session, and what is dispatched is lost, as between the end of a session and the next READY.
func (s *Server) HoldIdentify() {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.hold = true
}

// ReleaseIdentify answers the IDENTIFYs held back (READY, a new session) and stops holding.
func (s *Server) ReleaseIdentify() {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hold = false
	for _, h := range g.held {
		if g.conns[h.c] {
			g.identify(h.c, h.raw)
		}
	}
	g.held = nil
}

// Invalidated returns how many sessions the client ended by closing with 1000 or 1001.
func (s *Server) Invalidated() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.invalid
}

// Missed returns how many dispatches went nowhere because the bot had no session; Discord
// never replays them (the bot may read them over REST).
func (s *Server) Missed() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.missed
}

// ResumesOnResumeURL returns how many RESUMEs came through the resume_gateway_url of READY.
func (s *Server) ResumesOnResumeURL() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.resumesAt
}

// Heartbeats returns how many heartbeats (op 1) the fake received.
func (s *Server) Heartbeats() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.heartbeats
}

// Replayed returns how many dispatches the fake replayed after RESUMEs.
func (s *Server) Replayed() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.replayed
}

// Connected reports whether the bot has a live, identified or resumed gateway socket.
func (s *Server) Connected() bool {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	for _, sess := range s.gw.active {
		if sess.conn != nil {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
