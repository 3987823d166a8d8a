package feishutest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	larkws "github.com/larksuite/oapi-sdk-go/v3/ws"
)

// ackTimeout is how long the fake waits for the response frame of an event.
const ackTimeout = 10 * time.Second

// pending is an event waiting to be acknowledged.
type pending struct {
	eventID  string
	payload  []byte
	inFlight bool // pushed concurrently, its response awaited
}

// pump delivers queued events one at a time over the current transport (the long connection,
// or the webhook after UseWebhook), retrying each until it is acknowledged.
func (s *Server) pump() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		var p *pending
		if len(s.queue) > 0 {
			p = s.queue[0]
		}
		conn, hook := s.conn, s.hook
		s.mu.Unlock()
		if s.Concurrent && conn != nil && hook == nil {
			s.pushAll(conn)
			p = nil
		}
		answer, tried := 0, false
		switch {
		case p == nil:
		case hook != nil:
			answer, tried = hook.push(s, p)
		case conn != nil:
			answer, tried = conn.push(s, p), true
		}
		if tried {
			s.mu.Lock()
			s.attempts[p.eventID] = append(s.attempts[p.eventID], answer)
			if answer == http.StatusOK && len(s.queue) > 0 && s.queue[0] == p {
				s.queue = s.queue[1:]
			}
			s.mu.Unlock()
			if answer == http.StatusOK {
				continue
			}
		}
		wait := 20 * time.Millisecond // nothing to do: look again soon (or when kicked)
		if tried {
			wait = s.RetryDelay
		}
		t := time.NewTimer(wait)
		select {
		case <-s.done:
			t.Stop()
			return
		case <-s.wake:
			if tried { // a failed delivery waits its full delay
				select {
				case <-t.C:
				case <-s.done:
					return
				}
			}
		case <-t.C:
		}
		t.Stop()
	}
}

// pushAll writes every queued event not yet in flight, in order and back to back, and awaits
// their responses concurrently: an event answered 200 leaves the queue, another is pushed
// again after RetryDelay.
func (s *Server) pushAll(c *wsConn) {
	s.mu.Lock()
	var batch []*pending
	for _, p := range s.queue {
		if !p.inFlight {
			p.inFlight = true
			batch = append(batch, p)
		}
	}
	s.mu.Unlock()
	for _, p := range batch {
		ack, frameID, err := c.send(s, p)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			answer := 0
			if err == nil {
				answer = c.await(s, frameID, ack)
			}
			if answer != http.StatusOK {
				select {
				case <-time.After(s.RetryDelay):
				case <-s.done:
				}
			}
			s.mu.Lock()
			s.attempts[p.eventID] = append(s.attempts[p.eventID], answer)
			p.inFlight = false
			if answer == http.StatusOK {
				for i, q := range s.queue {
					if q == p {
						s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
						break
					}
				}
			}
			s.mu.Unlock()
			s.kick()
		}()
	}
}

// wsConn is one long connection from the bot.
type wsConn struct {
	ws        *websocket.Conn
	serviceID int32
	pushMu    sync.Mutex // held while an event waits for its response
	writeMu   sync.Mutex
	mu        sync.Mutex
	acks      map[string]chan int // frame message_id → response code
	closed    chan struct{}
	once      sync.Once
}

func (c *wsConn) close() {
	c.once.Do(func() {
		close(c.closed)
		_ = c.ws.UnderlyingConn().Close()
	})
}

func (c *wsConn) write(f *larkws.Frame) error {
	raw, err := f.Marshal()
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteMessage(websocket.BinaryMessage, raw)
}

// push sends one event frame and waits for its response frame; it returns the response code
// (0 when none came).
func (c *wsConn) push(s *Server, p *pending) int {
	c.pushMu.Lock()
	defer c.pushMu.Unlock()
	ack, frameID, err := c.send(s, p)
	if err != nil {
		return 0
	}
	return c.await(s, frameID, ack)
}

// send writes the event frame of p and returns where its response code will arrive.
func (c *wsConn) send(s *Server, p *pending) (chan int, string, error) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	frameID := s.nextID("msg_")
	s.mu.Unlock()
	ack := make(chan int, 1)
	c.mu.Lock()
	c.acks[frameID] = ack
	c.mu.Unlock()
	f := &larkws.Frame{SeqID: seq, LogID: seq, Service: c.serviceID, Method: int32(larkws.FrameTypeData),
		Headers: []larkws.Header{
			{Key: larkws.HeaderType, Value: string(larkws.MessageTypeEvent)},
			{Key: larkws.HeaderMessageID, Value: frameID},
			{Key: larkws.HeaderSum, Value: "1"},
			{Key: larkws.HeaderSeq, Value: "0"},
			{Key: larkws.HeaderTraceID, Value: "trace_" + frameID},
			{Key: larkws.HeaderTimestamp, Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
		},
		Payload: p.payload}
	if err := c.write(f); err != nil {
		c.close()
		c.forget(frameID)
		return nil, "", err
	}
	return ack, frameID, nil
}

// await waits for the response code of frame frameID (0 when none came).
func (c *wsConn) await(s *Server, frameID string, ack chan int) int {
	defer c.forget(frameID)
	t := time.NewTimer(ackTimeout)
	defer t.Stop()
	select {
	case code := <-ack:
		return code
	case <-c.closed:
	case <-s.done:
	case <-t.C:
	}
	return 0
}

func (c *wsConn) forget(frameID string) {
	c.mu.Lock()
	delete(c.acks, frameID)
	c.mu.Unlock()
}

// read serves the connection: pongs for pings, response frames to the waiting push.
func (c *wsConn) read(s *Server) {
	defer c.close()
	for {
		mt, raw, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var f larkws.Frame
		if mt != websocket.BinaryMessage || f.Unmarshal(raw) != nil {
			continue
		}
		hs := larkws.Headers(f.Headers)
		switch {
		case f.Method == int32(larkws.FrameTypeControl) && hs.GetString(larkws.HeaderType) == string(larkws.MessageTypePing):
			conf, _ := json.Marshal(s.clientConfig())
			pong := &larkws.Frame{Service: c.serviceID, Method: int32(larkws.FrameTypeControl),
				Headers: []larkws.Header{{Key: larkws.HeaderType, Value: string(larkws.MessageTypePong)}}, Payload: conf}
			if c.write(pong) != nil {
				return
			}
		case f.Method == int32(larkws.FrameTypeData):
			var resp larkws.Response
			_ = json.Unmarshal(f.Payload, &resp)
			c.mu.Lock()
			ack := c.acks[hs.GetString(larkws.HeaderMessageID)]
			c.mu.Unlock()
			if ack != nil {
				select {
				case ack <- resp.StatusCode:
				default:
				}
			}
		}
	}
}

// clientConfig is what the fake tells the SDK: reconnect after a random part of
// ReconnectNonce, then every ReconnectInterval (default: at once, then every second), for ever.
func (s *Server) clientConfig() *larkws.ClientConfig {
	interval := max(1, int(s.ReconnectInterval/time.Second))
	return &larkws.ClientConfig{ReconnectCount: -1, ReconnectInterval: interval,
		ReconnectNonce: int(s.ReconnectNonce / time.Second), PingInterval: 30}
}

func (s *Server) handleEndpoint(w http.ResponseWriter, r *http.Request) {
	if s.injected(w, "endpoint") {
		return
	}
	var req larkws.BootstrapRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, 1000040343, "bad request")
		return
	}
	if req.AppID != s.AppID || req.AppSecret != s.AppSecret {
		writeJSON(w, http.StatusOK, map[string]any{"code": 1000040344, "msg": "app id or secret invalid"})
		return
	}
	s.mu.Lock()
	device := s.nextID("dev_")
	s.connGen[device] = true
	s.mu.Unlock()
	url := "ws" + strings.TrimPrefix(s.URL, "http") + "/ws?device_id=" + device + "&service_id=7"
	writeJSON(w, http.StatusOK, larkws.EndpointResp{Code: 0, Msg: "ok",
		Data: &larkws.Endpoint{Url: url, ClientConfig: s.clientConfig()}})
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	default:
	}
	if s.refuse > 0 {
		s.refuse--
		s.mu.Unlock()
		w.Header().Set(larkws.HeaderHandshakeStatus, strconv.Itoa(larkws.AuthFailed))
		w.Header().Set(larkws.HeaderHandshakeAuthErrCode, strconv.Itoa(larkws.ExceedConnLimit))
		w.Header().Set(larkws.HeaderHandshakeMsg, "exceed connection limit")
		http.Error(w, "exceed connection limit", http.StatusForbidden)
		return
	}
	if !s.connGen[r.URL.Query().Get("device_id")] {
		s.mu.Unlock()
		w.Header().Set(larkws.HeaderHandshakeStatus, strconv.Itoa(larkws.Forbidden))
		w.Header().Set(larkws.HeaderHandshakeMsg, "unknown device")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, serviceID: 7, acks: map[string]chan int{}, closed: make(chan struct{})}
	s.mu.Lock()
	s.connects++
	old := s.conn
	s.conn = c
	s.mu.Unlock()
	if old != nil {
		old.close()
	}
	s.kick()
	c.read(s)
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
}

// Drop breaks the current long connection without a close frame, like a network failure. It
// first lets an event in flight get its answer, so the drop falls between two events.
func (s *Server) Drop() {
	s.mu.Lock()
	c := s.conn
	hook := s.hook
	s.mu.Unlock()
	if c != nil {
		c.pushMu.Lock()
		c.close()
		c.pushMu.Unlock()
		s.mu.Lock()
		if s.conn == c {
			s.conn = nil
		}
		s.mu.Unlock()
	}
	if hook != nil {
		hook.client.CloseIdleConnections()
	}
}

// Connected reports whether the bot holds a long connection.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil
}

// RefuseConnections makes the next n long-connection handshakes fail as the platform does
// when the app holds too many connections: handshake status 514 with auth error code
// 1000040350 (the SDK reports a ClientError).
func (s *Server) RefuseConnections(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = n
}

// Connects reports how many long connections the bot opened.
func (s *Server) Connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connects
}
