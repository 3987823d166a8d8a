package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// errConnClosed is the error of a request whose connection ended before its answer came.
var errConnClosed = errors.New("mcp: connection closed")

// transport carries JSON-RPC messages to one MCP server and hands what the server sends to the
// session's deliver. A transport calls ended once, when the connection is over.
type transport interface {
	// send sends one message. request names the id of a request whose answer the
	// transport should watch for (streamable HTTP answers it in the POST's response),
	// or is "" for a notification or a response.
	send(ctx context.Context, msg []byte, request string) error
	close() error
}

// wire is one JSON-RPC 2.0 message, in any of its three shapes.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// session is one JSON-RPC conversation with a server over a transport: requests wait for
// their answers by id, the server's notifications reach onNotify, and its requests (ping;
// nothing else is offered) are answered.
type session struct {
	t        transport
	onNotify func(method string) // called on the reading goroutine: must not block

	mu      sync.Mutex
	next    int64
	pending map[string]chan wire
	err     error         // why the connection ended
	done    chan struct{} // closed when it ended
}

func newSession(onNotify func(string)) *session {
	if onNotify == nil {
		onNotify = func(string) {}
	}
	return &session{onNotify: onNotify, pending: map[string]chan wire{}, done: make(chan struct{})}
}

// call sends a request and decodes its result into out (which may be nil).
func (s *session) call(ctx context.Context, method string, params, out any) error {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	s.next++
	id := strconv.FormatInt(s.next, 10)
	answer := make(chan wire, 1)
	s.pending[id] = answer
	s.mu.Unlock()
	defer s.forget(id)

	msg, err := encode(wire{JSONRPC: "2.0", ID: json.RawMessage(id), Method: method}, params)
	if err != nil {
		return err
	}
	if err := s.t.send(ctx, msg, id); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case w := <-answer:
		if w.Error != nil {
			return fmt.Errorf("%s: %w", method, w.Error)
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(w.Result, out); err != nil {
			return fmt.Errorf("%s: the server's result: %w", method, err)
		}
		return nil
	case <-s.done:
		return fmt.Errorf("%s: %w", method, s.wait())
	case <-ctx.Done():
		// Tell the server to stop working on it; its answer, if any, is dropped.
		cancelled, _ := encode(wire{JSONRPC: "2.0", Method: "notifications/cancelled"},
			map[string]any{"requestId": json.RawMessage(id), "reason": ctx.Err().Error()})
		sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
		_ = s.t.send(sendCtx, cancelled, "")
		cancel()
		return ctx.Err()
	}
}

// notify sends a notification.
func (s *session) notify(ctx context.Context, method string, params any) error {
	msg, err := encode(wire{JSONRPC: "2.0", Method: method}, params)
	if err != nil {
		return err
	}
	return s.t.send(ctx, msg, "")
}

func encode(w wire, params any) ([]byte, error) {
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		w.Params = p
	}
	return json.Marshal(w)
}

func (s *session) forget(id string) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

// deliver takes one message (or a JSON-RPC batch) the server sent.
func (s *session) deliver(raw []byte) {
	if len(raw) > 0 && raw[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(raw, &batch) == nil {
			for _, m := range batch {
				s.deliver(m)
			}
		}
		return
	}
	var w wire
	if json.Unmarshal(raw, &w) != nil {
		return // not JSON-RPC: nothing to answer
	}
	switch {
	case w.Method != "" && len(w.ID) > 0:
		go s.answerRequest(w) // sending may block on the transport; never on the reader
	case w.Method != "":
		s.onNotify(w.Method)
	case len(w.ID) > 0:
		s.mu.Lock()
		answer := s.pending[idKey(w.ID)]
		s.mu.Unlock()
		if answer != nil {
			select {
			case answer <- w:
			default: // answered twice: the first one counts
			}
		}
	}
}

// abandon ends a request whose answer can no longer come (its response stream broke).
func (s *session) abandon(id string, err error) {
	s.mu.Lock()
	answer := s.pending[id]
	s.mu.Unlock()
	if answer != nil {
		select {
		case answer <- wire{Error: &rpcError{Code: -32000, Message: err.Error()}}:
		default:
		}
	}
}

// answerRequest answers what the server asks: ping, roots/list (none), and "method not
// found" for everything else (reef offers no sampling or elicitation).
func (s *session) answerRequest(w wire) {
	reply := wire{JSONRPC: "2.0", ID: w.ID}
	switch w.Method {
	case "ping":
		reply.Result = json.RawMessage(`{}`)
	case "roots/list":
		reply.Result = json.RawMessage(`{"roots":[]}`)
	default:
		reply.Error = &rpcError{Code: -32601, Message: "method not found: " + w.Method}
	}
	msg, err := json.Marshal(reply)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	_ = s.t.send(ctx, msg, "")
}

// idKey is the map key of an id: numbers as their digits, strings as their text.
func idKey(id json.RawMessage) string {
	var str string
	if json.Unmarshal(id, &str) == nil {
		return str
	}
	return string(id)
}

// ended records why the connection ended and fails every request still waiting. Only the
// first call counts.
func (s *session) ended(err error) {
	if err == nil {
		err = errConnClosed
	} else if !errors.Is(err, errConnClosed) {
		err = fmt.Errorf("%w: %w", errConnClosed, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	close(s.done)
}

// wait waits for the connection to end and says why.
func (s *session) wait() error {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close ends the connection.
func (s *session) close() error {
	err := s.t.close()
	s.ended(nil)
	return err
}
