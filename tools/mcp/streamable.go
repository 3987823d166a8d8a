package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/reefgw/reef/providers/sse"
)

// notifyTimeout bounds sending a notification or an answer to the server.
const notifyTimeout = 10 * time.Second

// errSessionGone is the server's 404 for a session it no longer knows (it restarted):
// the connection is over, and the supervisor starts a new one.
var errSessionGone = errors.New("the server no longer knows this session")

// streamable speaks MCP's streamable HTTP transport: every message is a POST to the
// endpoint, answered by 202, by one JSON message, or by an event stream that carries the
// answer (and whatever the server sends before it); a GET opens the stream on which the
// server sends what is not an answer (tools/list_changed). The goroutines reading streams
// are the transport's: close cancels them and waits.
type streamable struct {
	endpoint string
	hc       *http.Client
	s        *session

	ctx    context.Context // the connection's life: close cancels it
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	sessionID string // Mcp-Session-Id, from the answer to initialize
	version   string // MCP-Protocol-Version, once agreed
	listening bool   // the GET stream was started
	closeOnce sync.Once
}

func newStreamable(endpoint string, hc *http.Client, s *session) *streamable {
	ctx, cancel := context.WithCancel(context.Background())
	t := &streamable{endpoint: endpoint, hc: hc, s: s, ctx: ctx, cancel: cancel}
	s.t = t
	return t
}

// agreed records the protocol revision and opens the server's own stream.
func (t *streamable) agreed(version string) {
	t.mu.Lock()
	t.version = version
	start := !t.listening
	t.listening = true
	t.mu.Unlock()
	if start {
		t.wg.Add(1)
		go t.listen()
	}
}

func (t *streamable) headers(h http.Header) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessionID != "" {
		h.Set("Mcp-Session-Id", t.sessionID)
	}
	if t.version != "" {
		h.Set("MCP-Protocol-Version", t.version)
	}
}

func (t *streamable) send(ctx context.Context, msg []byte, request string) error {
	// The request lives as long as the connection: an answer streamed later must not be
	// cut when the caller's context ends (the caller stops waiting, that is all).
	reqCtx, stop := context.WithCancel(t.ctx)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.endpoint, bytes.NewReader(msg))
	if err != nil {
		stop()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	t.headers(req.Header)
	unwatch := context.AfterFunc(ctx, stop) // until the response headers: the caller's deadline counts
	resp, err := t.hc.Do(req)
	unwatch()
	if err != nil {
		stop()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", errConnClosed, err)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.mu.Lock()
		if t.sessionID == "" {
			t.sessionID = id
		}
		t.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && t.hasSession():
		drain(resp, stop)
		t.s.ended(errSessionGone)
		return fmt.Errorf("%w: %w", errConnClosed, errSessionGone)
	case resp.StatusCode/100 != 2:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		drain(resp, stop)
		return fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(body)))
	case resp.StatusCode == http.StatusAccepted || request == "":
		drain(resp, stop)
		return nil
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if media == "text/event-stream" {
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer stop()
			err := t.readEvents(resp.Body)
			if err == nil {
				err = errors.New("the server's answer stream ended without the answer")
			}
			t.s.abandon(request, err) // a no-op once the answer came
		}()
		return nil
	}
	defer stop()
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
	if err != nil {
		return fmt.Errorf("%w: %w", errConnClosed, err)
	}
	if len(body) > maxMessage {
		return fmt.Errorf("the server sent a message over %d MiB", maxMessage>>20)
	}
	t.s.deliver(body)
	return nil
}

func (t *streamable) hasSession() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID != ""
}

// readEvents delivers a stream's messages until it ends; nil at its clean end.
func (t *streamable) readEvents(body io.ReadCloser) error {
	r := sse.NewReader(body, 0)
	defer r.Close()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if (ev.Name == "" || ev.Name == "message") && strings.TrimSpace(ev.Data) != "" {
			t.s.deliver([]byte(ev.Data))
		}
	}
}

// listen keeps the GET stream open for what the server sends on its own. A server without
// one (405) is fine: reef then learns of changed tools at the next connection. A server that
// no longer knows the session ends the connection.
func (t *streamable) listen() {
	defer t.wg.Done()
	wait := time.Second
	for t.ctx.Err() == nil {
		req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, t.endpoint, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		t.headers(req.Header)
		resp, err := t.hc.Do(req)
		switch {
		case err != nil:
		case resp.StatusCode == http.StatusMethodNotAllowed:
			drain(resp, nil)
			return
		case resp.StatusCode == http.StatusNotFound && t.hasSession():
			drain(resp, nil)
			t.s.ended(errSessionGone)
			return
		case resp.StatusCode/100 != 2:
			drain(resp, nil)
		default:
			began := time.Now()
			_ = t.readEvents(resp.Body)
			if time.Since(began) > time.Minute {
				wait = time.Second
			}
		}
		select {
		case <-t.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

func drain(resp *http.Response, stop func()) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if stop != nil {
		stop()
	}
}

// close ends the session on the server (DELETE, best effort), stops the streams and waits
// for their readers.
func (t *streamable) close() error {
	t.closeOnce.Do(t.end)
	return nil
}

func (t *streamable) end() {
	if t.hasSession() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.endpoint, nil); err == nil {
			t.headers(req.Header)
			if resp, err := t.hc.Do(req); err == nil {
				drain(resp, nil)
			}
		}
		cancel()
	}
	t.cancel()
	t.wg.Wait()
}
