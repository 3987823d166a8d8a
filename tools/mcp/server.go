package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/tools"
)

// Server is one configured MCP server and its supervised connection.
type Server struct {
	cfg Config
	log zerolog.Logger

	mu      sync.Mutex
	session *client                // nil while down
	up      chan struct{}          // closed when session is set; a fresh one while down
	lastErr error                  // why the last connection attempt or connection ended
	listed  []*remoteTool          // the tools of the first successful listing
	latest  []*remoteTool          // the latest listing, in the server's order
	current map[string]*remoteTool // the latest listing, by the tool's name on the server
	tools   []*Tool                // every tool any listing had, wrapped once, in the order first listed
	wrapped map[string]bool        // the names on the server of the tools wrapNew has seen
	gen     uint64                 // counts listings that changed current
	first   chan struct{}          // closed when the first attempt to connect and list ends

	cancel context.CancelFunc
	done   chan struct{} // closed when the supervisor ends
}

// NewServer checks cfg and returns the server, not yet started.
func NewServer(cfg Config, log zerolog.Logger) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg.withDefaults(), log: log.With().Str("mcp", cfg.Name).Logger(),
		up: make(chan struct{}), first: make(chan struct{}), done: make(chan struct{})}, nil
}

// Name is the server's configured name.
func (s *Server) Name() string { return s.cfg.Name }

// Start starts the supervisor: it connects, and reconnects whenever the connection ends,
// until ctx ends or Stop is called. Call it once.
func (s *Server) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	go s.supervise(ctx)
}

// Stop ends the connection (a stdio server's process group is killed) and waits for the
// supervisor to end.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
}

// WaitListed waits until the first attempt to connect and list the server's tools ended, or
// ctx did, and reports whether the tools were listed.
func (s *Server) WaitListed(ctx context.Context) bool {
	select {
	case <-s.first:
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed != nil
}

// Tools returns the server's tools as reef tools: every tool a listing has had, each the same
// Tool every time. A tool the server has withdrawn is still among them; it is not Offered.
// A tool the server adds later joins them, and Generation moves.
func (s *Server) Tools() []tools.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tools.Tool, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, t)
	}
	return out
}

// Generation grows whenever the server's listing changes: a tool added, withdrawn or
// described anew.
func (s *Server) Generation() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// err is why the last attempt to connect failed, or the last connection ended.
func (s *Server) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

func (s *Server) supervise(ctx context.Context) {
	defer close(s.done)
	defer s.closeFirst()
	wait := s.cfg.MinBackoff
	for {
		began := time.Now()
		err := s.serve(ctx)
		s.mu.Lock()
		s.lastErr = err
		s.mu.Unlock()
		s.closeFirst() // the first attempt is over: Manager.Start waits no longer
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > healthyAfter {
			wait = s.cfg.MinBackoff
		}
		s.log.Warn().Err(err).Str("retryIn", wait.Round(time.Millisecond).String()).Msg("mcp server down; restarting")
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, maxBackoff)
	}
}

// serve runs one connection: connect, list the tools, publish the session, list them again
// whenever the server says they changed, until the connection ends.
func (s *Server) serve(ctx context.Context) error {
	changed := make(chan struct{}, 1) // notifications/tools/list_changed, coalesced
	cs, stopProc, err := s.connect(ctx, changed)
	if err != nil {
		return err
	}
	defer stopProc()
	defer cs.rpc.close()
	listed, err := s.list(ctx, cs)
	if err != nil {
		return err
	}
	s.publish(cs, listed)
	s.log.Info().Int("tools", len(listed)).Msg("mcp server connected")
	defer s.drop(cs)
	stop := context.AfterFunc(ctx, func() { cs.rpc.close() })
	defer stop()
	ended := make(chan error, 1)
	go func() { ended <- cs.rpc.wait() }() // ends when cs is closed, at the latest by the deferred close
	for {
		select {
		case err := <-ended:
			if err != nil {
				return fmt.Errorf("mcp: %s: connection ended: %w", s.cfg.Name, err)
			}
			return fmt.Errorf("mcp: %s: connection ended", s.cfg.Name)
		case <-changed:
			// Listed here, not where the notification is read: a request from the
			// reading goroutine would wait for its own answer.
			listed, err := s.list(ctx, cs)
			if err != nil {
				s.log.Warn().Err(err).Msg("mcp server changed its tools, but listing them failed; keeping the old list")
				continue
			}
			s.relisted(listed)
		}
	}
}

// list lists the server's tools within the connect timeout.
func (s *Server) list(ctx context.Context, cs *client) ([]*remoteTool, error) {
	listCtx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	listed, err := cs.tools(listCtx)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s: list tools: %w", s.cfg.Name, err)
	}
	return listed, nil
}

// connect starts the transport and the MCP session. stopProc kills what is left of a stdio
// server's process group once the session is closed.
// changed hears the server's notifications/tools/list_changed.
func (s *Server) connect(ctx context.Context, changed chan<- struct{}) (cs *client, stopProc func(), err error) {
	rpc := newSession(func(method string) {
		if method == "notifications/tools/list_changed" {
			select {
			case changed <- struct{}{}:
			default: // a listing is due already
			}
		}
	})
	stopProc = func() {}
	var agreed func(version string)
	if s.cfg.Command != "" {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = append([]string{}, s.cfg.Env...)
		cmd.Dir = s.cfg.Dir
		cmd.Stderr = &stderrLog{log: s.log, secrets: s.cfg.Secrets}
		setProcAttr(cmd)
		if _, err := startStdio(cmd, rpc); err != nil {
			return nil, nil, fmt.Errorf("mcp: %s: connect: %w", s.cfg.Name, err)
		}
		stopProc = func() { killGroup(cmd) }
	} else {
		hc := s.cfg.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		if len(s.cfg.Headers) > 0 {
			hc = withHeaders(hc, s.cfg.Headers)
		}
		agreed = newStreamable(s.cfg.URL, hc, rpc).agreed
	}
	connCtx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	cs, err = handshake(connCtx, rpc, agreed)
	if err != nil {
		_ = rpc.close()
		stopProc()
		return nil, nil, fmt.Errorf("mcp: %s: connect: %w", s.cfg.Name, err)
	}
	return cs, stopProc, nil
}

func (s *Server) publish(cs *client, listed []*remoteTool) {
	s.relisted(listed) // a restarted server may list other tools
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session, s.lastErr = cs, nil
	close(s.up)
	if s.listed == nil {
		s.listed = append([]*remoteTool{}, listed...)
		// A server down at start had its first attempt end already (supervise closed
		// first): closing it again would panic the gateway when the server comes up.
		select {
		case <-s.first:
		default:
			close(s.first)
		}
	}
}

// relisted makes listed the server's current tools: the tools reef offers take their new
// descriptions and schemas, tools it no longer lists are withdrawn, and tools it added are
// wrapped and offered, to the agents and callers whose tool policy allows them.
func (s *Server) relisted(listed []*remoteTool) {
	cur := make(map[string]*remoteTool, len(listed))
	for _, t := range listed {
		cur[t.Name] = t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil && sameTools(s.current, cur) {
		return
	}
	var removed []string
	for name := range s.current {
		if cur[name] == nil {
			removed = append(removed, name)
		}
	}
	var fresh []*remoteTool
	for _, t := range listed {
		if !s.wrapped[t.Name] {
			fresh = append(fresh, t)
		}
	}
	added := s.wrapNew(fresh)
	if s.current != nil {
		s.log.Info().Strs("withdrawn", removed).Strs("added", added).Int("tools", len(cur)).
			Msg("mcp server changed its tools; added tools are offered where the tool policy allows them")
	}
	s.current, s.latest = cur, slices.Clone(listed)
	s.gen++
}

// sameTools reports whether two listings offer the same tools with the same descriptions and schemas.
func sameTools(a, b map[string]*remoteTool) bool {
	if len(a) != len(b) {
		return false
	}
	for name, t := range a {
		u := b[name]
		if u == nil || t.Description != u.Description || t.Title != u.Title {
			return false
		}
		if !bytes.Equal(t.InputSchema, u.InputSchema) {
			return false
		}
	}
	return true
}

// currentTool is the latest listing's tool of that name on the server, and the generation.
func (s *Server) currentTool(name string) (*remoteTool, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current[name], s.gen
}

// drop stops offering cs to calls: its connection ended. A call that saw it end drops it
// before the supervisor notices, so the next call waits for the new connection.
func (s *Server) drop(cs *client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == cs {
		s.session, s.up = nil, make(chan struct{})
	}
}

func (s *Server) closeFirst() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.first:
	default:
		close(s.first)
	}
}

// live returns the connected session, waiting for it within ctx.
func (s *Server) live(ctx context.Context) (*client, error) {
	for {
		s.mu.Lock()
		cs, up, lastErr := s.session, s.up, s.lastErr
		s.mu.Unlock()
		if cs != nil {
			return cs, nil
		}
		select {
		case <-up:
		case <-s.done:
			return nil, fmt.Errorf("%w: reef is shutting down", ErrNotConnected)
		case <-ctx.Done():
			if lastErr != nil {
				return nil, fmt.Errorf("%w (%v)", ErrNotConnected, lastErr)
			}
			return nil, ErrNotConnected
		}
	}
}

// errClosed reports whether err says the connection ended under a call.
func errClosed(err error) bool {
	return errors.Is(err, errConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
