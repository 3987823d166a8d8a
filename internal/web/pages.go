package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/redact"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// assetHandler serves the embedded CSS and JavaScript (open: they hold nothing private).
func assetHandler() http.Handler {
	sub, _ := fs.Sub(assetFS, "assets")
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// pages renders the Control UI.
type pages struct {
	cfg  Config
	tmpl *lazyTemplates // parsed on first use (templates.go)
	red  *redact.Redactor
}

var funcs = template.FuncMap{
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		d := time.Since(t).Round(time.Second)
		switch {
		case d < time.Minute:
			return fmt.Sprintf("%ds ago", int(d.Seconds()))
		case d < time.Hour:
			return fmt.Sprintf("%dm ago", int(d.Minutes()))
		case d < 48*time.Hour:
			return fmt.Sprintf("%dh ago", int(d.Hours()))
		}
		return t.Format("2006-01-02")
	},
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"ms": func(ms int64) string {
		if ms == 0 {
			return "-"
		}
		return time.UnixMilli(ms).Local().Format("2006-01-02 15:04")
	},
	"since":     func(t time.Time) string { return time.Since(t).Round(time.Second).String() },
	"firstLine": func(s string) string { return firstLine(s, 120) },
	"markdown":  renderMarkdown,
	"latency": func(d time.Duration) string {
		if d <= 0 {
			return "-"
		}
		if d < 10*time.Millisecond {
			return d.Round(100 * time.Microsecond).String()
		}
		return d.Round(time.Millisecond).String()
	},
}

func newPages(cfg Config) (*pages, error) {
	p := &pages{cfg: cfg, tmpl: &lazyTemplates{}, red: redact.New(cfg.Secrets...)}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		if _, err := parseTemplate(base, name); err != nil { // checked now, kept once used
			return nil, err
		}
		p.tmpl.add(base, name)
	}
	return p, nil
}

// view is what every page template gets.
type view struct {
	Title, Nav, CSRF, Version string
	Data                      any
}

// render writes the page name with data, redacting secrets from the whole page.
func (s *Server) render(w http.ResponseWriter, code int, name, title string, data any) {
	var buf bytes.Buffer
	v := view{Title: title, Nav: name, CSRF: s.auth.csrf(), Version: s.cfg.Version, Data: data}
	if err := s.pages.tmpl.execute(&buf, name, v); err != nil {
		s.log.Error().Err(err).Str("page", name).Msg("web: render")
		jsonError(w, http.StatusInternalServerError, "internal error (see the gateway's log)")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write([]byte(s.pages.red.String(buf.String())))
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, problem string) {
	next := r.URL.Path
	if r.URL.RawQuery != "" {
		next += "?" + r.URL.RawQuery
	}
	if r.URL.Path == "/login" {
		next = localPath(r.FormValue("next"))
	}
	var buf bytes.Buffer
	v := view{Title: "Log in", Nav: "login", Data: map[string]string{"Next": next, "Problem": problem}}
	if err := s.pages.tmpl.execute(&buf, "login", v); err != nil {
		s.log.Error().Err(err).Msg("web: render login")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

func (p *pages) routes(s *Server) {
	s.page("GET /{$}", s.overview)
	s.page("GET /sessions", s.sessions)
	s.page("GET /sessions/view", s.conversation)
	s.page("GET /sessions/export", s.export)
	s.page("GET /live", s.live)
	s.page("GET /live/events", s.liveEvents)
	s.page("GET /cron", s.cron)
	s.page("POST /cron/{action}", s.cronAction)
	s.page("GET /pairing", s.pairing)
	s.page("POST /pairing/{action}", s.pairingAction)
	s.page("GET /config", s.config)
	s.page("POST /config/providers", s.probeProviders)
	s.page("GET /config/edit", s.configEdit)  // config_edit.go
	s.page("POST /config/edit", s.configSave) // config_edit.go
	s.page("POST /config/settings", s.configSettings)
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	o, err := s.cfg.Backend.Overview(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "overview", "Overview", o)
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	rows, err := s.cfg.Backend.Sessions(r.Context(), q)
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "sessions", "Sessions", filterSessions(r, q, rows)) // sessions_filter.go
}

func (s *Server) conversation(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		jsonError(w, http.StatusBadRequest, "key is required: /sessions/view?key=<session key>")
		return
	}
	c, err := s.cfg.Backend.Conversation(r.Context(), key)
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "conversation", c.Info.Key, map[string]any{"C": c, "Items": items(c)})
}

func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	key, format := r.URL.Query().Get("key"), r.URL.Query().Get("format")
	ext := map[string]string{"jsonl": "jsonl", "md": "md"}[format]
	if key == "" || ext == "" {
		jsonError(w, http.StatusBadRequest, "key and format (jsonl or md) are required")
		return
	}
	var buf bytes.Buffer
	if err := s.cfg.Backend.Export(r.Context(), key, format, &buf); err != nil {
		s.backendError(w, err)
		return
	}
	ct := map[string]string{"jsonl": "application/x-ndjson", "md": "text/markdown; charset=utf-8"}[format]
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fileName(key)+"."+ext))
	w.Write([]byte(s.pages.red.String(buf.String())))
}

// fileName makes a session key a file name.
func fileName(key string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, key)
}

func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "live", "Live", map[string]any{"Session": r.URL.Query().Get("session"),
		"Kind": r.URL.Query().Get("kind"), "Kinds": liveKinds}) // liveKinds: backlog.go
}

func (s *Server) cron(w http.ResponseWriter, r *http.Request) {
	jobs, err := s.cfg.Backend.CronJobs(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "cron", "Cron", jobs)
}

func (s *Server) cronAction(w http.ResponseWriter, r *http.Request) {
	action, id := r.PathValue("action"), r.PostFormValue("id")
	if !oneOf(action, "run", "enable", "disable", "remove") {
		jsonError(w, http.StatusBadRequest, "unknown action "+quote(action)+": use run, enable, disable or remove")
		return
	}
	if id == "" {
		jsonError(w, http.StatusBadRequest, "id is required")
		return
	}
	s.done(w, r, "/cron", s.cfg.Backend.Cron(r.Context(), action, id))
}

func (s *Server) pairing(w http.ResponseWriter, r *http.Request) {
	ps, err := s.cfg.Backend.Pairings(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "pairing", "Pairing", ps)
}

func (s *Server) pairingAction(w http.ResponseWriter, r *http.Request) {
	action, channel, code := r.PathValue("action"), r.PostFormValue("channel"), r.PostFormValue("code")
	if !oneOf(action, "approve", "deny") {
		jsonError(w, http.StatusBadRequest, "unknown action "+quote(action)+": use approve or deny")
		return
	}
	if channel == "" || code == "" {
		jsonError(w, http.StatusBadRequest, "channel and code are required")
		return
	}
	s.done(w, r, "/pairing", s.cfg.Backend.Pairing(r.Context(), action, channel, code))
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	c, err := s.cfg.Backend.Config(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "config", "Config", c)
}

// probeProviders is the Config page's "check providers": the page again with each
// provider's probe for a browser, the probes as JSON for a script.
func (s *Server) probeProviders(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), probeTimeout)
	defer cancel()
	probes, err := s.cfg.Backend.ProbeProviders(ctx)
	if err != nil {
		s.backendError(w, err)
		return
	}
	for i := range probes {
		probes[i].Reason = s.pages.red.String(probes[i].Reason)
	}
	if !wantsHTML(r) {
		writeJSON(w, http.StatusOK, map[string]any{"providers": probes})
		return
	}
	c, err := s.cfg.Backend.Config(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	c.Probes, c.Probed = probes, true
	s.render(w, http.StatusOK, "config", "Config", c)
}

// probeTimeout bounds "check providers" as a whole (each provider has a shorter one).
const probeTimeout = 30 * time.Second

// done answers a change: back to the page for a browser's form, {"ok": true} for a script.
func (s *Server) done(w http.ResponseWriter, r *http.Request, page string, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || err != nil {
		s.backendError(w, err)
		return
	}
	if wantsHTML(r) {
		http.Redirect(w, r, page, http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}
