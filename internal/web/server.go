package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/events"
)

// Config configures a Server.
type Config struct {
	// Listen is host:port (port 0 picks a free one). Off loopback a Token is required.
	Listen string
	// Token is the gateway token every page and API call must present. Required.
	Token   string
	Version string
	Backend Backend
	// Chat is the WebChat channel; nil serves no chat page.
	Chat *webchat.Channel
	// Events is the run-event bus the Live page and the chat's streamed text follow; nil: none.
	Events *events.Bus
	// Ready reports whether the gateway is ready (storage open, channels started), for /readyz.
	Ready func() error
	// Secrets are removed from every page and event this server writes (a second line of
	// defence: the Backend redacts at the source).
	Secrets []string
}

// Server is the gateway's HTTP face. Its constructor starts nothing; Start listens.
type Server struct {
	cfg    Config
	log    zerolog.Logger
	auth   auth
	limit  *limiter // failed logins per client address
	mux    *http.ServeMux
	pages  *pages
	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc // ends the streams (SSE) of every request at Close
	back   backlog            // the Live page's last events (backlog.go)
	mu     sync.Mutex
}

// New checks cfg and builds the routes.
func New(cfg Config, log zerolog.Logger) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("web: no gateway token (set REEF_GATEWAY_TOKEN)")
	}
	if !Loopback(cfg.Listen) && len(cfg.Token) < 16 {
		return nil, fmt.Errorf("web: %s is reachable from other machines and needs a token of at least 16 characters: "+
			"set REEF_GATEWAY_TOKEN (or gateway.http.token), or listen on 127.0.0.1", cfg.Listen)
	}
	if cfg.Backend == nil {
		return nil, errors.New("web: no backend")
	}
	if _, ok := cfg.Backend.(ChatBackend); cfg.Chat != nil && !ok {
		return nil, errors.New("web: the chat needs a backend that implements ChatBackend")
	}
	pg, err := newPages(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, auth: newAuth(cfg.Token), limit: newLimiter(), mux: http.NewServeMux(), pages: pg}
	s.routes()
	return s, nil
}

// Loopback reports whether listen (host:port) binds only loopback addresses.
func Loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Mount serves h at pattern (an http.ServeMux pattern such as "/v1/" or "GET /metrics")
// behind the same authentication as the pages: the gateway token (Bearer) or the login
// cookie, and a CSRF token for cookie requests that change something. h sets its own body
// limits. Call it before Start.
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, s.protect(h)) }

// MountOpen serves h at pattern without the pages' authentication, for handlers that check
// their callers themselves: the OpenAI-compatible API (the gateway token or one of its API
// keys, Bearer only) and a platform's callbacks that carry their own signature (Slack's
// Events API). Call it before Start.
func (s *Server) MountOpen(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Handler is the server's whole handler (for tests and for embedding).
func (s *Server) Handler() http.Handler { return securityHeaders(s.mux) }

func (s *Server) routes() {
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Ready != nil {
			if err := s.cfg.Ready(); err != nil {
				jsonError(w, http.StatusServiceUnavailable, err.Error())
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	s.mux.Handle("GET /assets/", assetHandler())
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	s.mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) { s.renderLogin(w, r, "") })
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.Handle("POST /logout", s.protect(http.HandlerFunc(s.logout)))
	s.pages.routes(s)
	s.chatRoutes()
	s.consoleRoutes() // cron editing, logs, usage (console.go)
	s.mux.Handle("/", s.protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonError(w, http.StatusNotFound, "no such page: "+r.URL.Path)
	})))
}

// page registers a Control UI route behind authentication, with a body limit.
func (s *Server) page(pattern string, h http.HandlerFunc) {
	s.mux.Handle(pattern, s.protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r)
	})))
}

// maxBody bounds what a page's request may carry (a chat message is at most 32 KiB).
const maxBody = 256 << 10

// Start listens on Config.Listen and serves until Close. It returns the address it listens on.
func (s *Server) Start() (string, error) {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return "", fmt.Errorf("web: listen on %s: %w (set gateway.http.listen to another address, or off)", s.cfg.Listen, err)
	}
	base, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return base }}
	s.mu.Lock()
	s.srv, s.ln, s.cancel = srv, ln, cancel
	s.mu.Unlock()
	if s.cfg.Events != nil {
		go s.back.follow(base, s.cfg.Events) // until Close
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("web: serve")
		}
	}()
	return ln.Addr().String(), nil
}

// Close ends the open streams and stops the server, waiting up to 5 s for requests in flight.
func (s *Server) Close() error {
	s.mu.Lock()
	srv, cancel := s.srv, s.cancel
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	cancel()
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := srv.Shutdown(ctx); err != nil {
		return srv.Close()
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// jsonError answers {"error": msg} with code.
func jsonError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// backendError answers a Backend's error: 404, 400 or 500 (the detail only in the log).
func (s *Server) backendError(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, ErrNotFound):
		jsonError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, ErrBadInput):
		jsonError(w, http.StatusBadRequest, err.Error())
	case errors.As(err, &mbe):
		jsonError(w, http.StatusRequestEntityTooLarge, "the request is too large")
	default:
		s.log.Error().Err(err).Msg("web")
		jsonError(w, http.StatusInternalServerError, "internal error (see the gateway's log)")
	}
}
