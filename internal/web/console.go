package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reefgw/reef/internal/logring"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/usage"
)

// Console is what the Control UI's management pages read and change beyond Backend: cron
// jobs edited from a form, the gateway's log, the token ledger. A Backend that also
// implements Console gets those pages (cmd/reef's does, through the code of `reef cron`,
// `reef usage` and the log ring); without it they answer 404.
type Console interface {
	// CronJob is one job with its recorded runs, newest first; ErrNotFound for an unknown id.
	CronJob(ctx context.Context, id string) (CronDetail, error)
	// CronSave adds the job (id "") or changes job id, as `reef cron add` and the cron tool's
	// update do; ErrBadInput with the reason when the job is refused.
	CronSave(ctx context.Context, id string, in schedule.JobInput) (schedule.Job, error)
	// Logs are the kept log lines q selects, oldest first, secrets redacted.
	Logs(q logring.Query) []logring.Line
	// FollowLogs streams the lines written from now on until stop is called.
	FollowLogs() (lines <-chan logring.Line, stop func())
	// Usage is the token ledger of the last days days, priced (reef usage).
	Usage(ctx context.Context, days int) (usage.Report, error)
	// ChannelAction pauses, resumes or restarts a channel's platform connection (action
	// pause|resume|restart); ErrNotFound for an unknown channel.
	ChannelAction(ctx context.Context, action, name string) error
	// SessionAction resets or deletes a session (action reset|delete); ErrNotFound for an
	// unknown key, ErrBadInput when it cannot be done now (deleting an active session).
	SessionAction(ctx context.Context, action, key string) error
}

// CronDetail is one job's page.
type CronDetail struct {
	Job  schedule.Job
	Runs []schedule.Run
}

// console is the Backend's Console, or nil.
func (s *Server) console() Console {
	c, _ := s.cfg.Backend.(Console)
	return c
}

// consoleRoutes adds the management pages.
func (s *Server) consoleRoutes() {
	s.page("GET /cron/job", s.withConsole(s.cronJob))
	s.page("GET /cron/edit", s.withConsole(s.cronEdit))
	s.page("POST /cron/save", s.withConsole(s.cronSave))
	s.page("GET /cron/preview", s.cronPreview)
	s.page("GET /logs", s.withConsole(s.logs))
	s.page("GET /logs/events", s.withConsole(s.logEvents))
	s.page("GET /usage", s.withConsole(s.usage))
	s.page("GET /channels", s.withConsole(s.channels))
	s.page("POST /channels/{action}", s.withConsole(s.channelAction))
	s.page("POST /sessions/{action}", s.withConsole(s.sessionAction))
}

func (s *Server) sessionAction(w http.ResponseWriter, r *http.Request, c Console) {
	action, key := r.PathValue("action"), r.PostFormValue("key")
	if !oneOf(action, "reset", "delete") {
		jsonError(w, http.StatusBadRequest, "unknown action "+quote(action)+": use reset or delete")
		return
	}
	if key == "" {
		jsonError(w, http.StatusBadRequest, "key is required")
		return
	}
	s.done(w, r, "/sessions", c.SessionAction(r.Context(), action, key))
}

// channels is each channel's state with its controls, and the pairing requests waiting.
func (s *Server) channels(w http.ResponseWriter, r *http.Request, c Console) {
	o, err := s.cfg.Backend.Overview(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	ps, err := s.cfg.Backend.Pairings(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "channels", "Channels", map[string]any{"Channels": o.Channels, "Pairings": ps})
}

func (s *Server) channelAction(w http.ResponseWriter, r *http.Request, c Console) {
	action, name := r.PathValue("action"), r.PostFormValue("channel")
	if !oneOf(action, "pause", "resume", "restart") {
		jsonError(w, http.StatusBadRequest, "unknown action "+quote(action)+": use pause, resume or restart")
		return
	}
	if name == "" {
		jsonError(w, http.StatusBadRequest, "channel is required")
		return
	}
	s.done(w, r, "/channels", c.ChannelAction(r.Context(), action, name))
}

func (s *Server) withConsole(h func(http.ResponseWriter, *http.Request, Console)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := s.console()
		if c == nil {
			jsonError(w, http.StatusNotFound, "this gateway serves no "+r.URL.Path+" page")
			return
		}
		h(w, r, c)
	}
}

func (s *Server) cronJob(w http.ResponseWriter, r *http.Request, c Console) {
	d, err := c.CronJob(r.Context(), r.URL.Query().Get("id"))
	if err != nil {
		s.backendError(w, err)
		return
	}
	s.render(w, http.StatusOK, "cronjob", "Cron job", map[string]any{"D": d, "Human": Human(d.Job, time.Now())})
}

// cronEdit is the form: empty to add a job, filled from ?id= to change one.
func (s *Server) cronEdit(w http.ResponseWriter, r *http.Request, c Console) {
	f := cronForm{Kind: "cron", Payload: "systemEvent", Deliver: "announce"}
	if id := r.URL.Query().Get("id"); id != "" {
		d, err := c.CronJob(r.Context(), id)
		if err != nil {
			s.backendError(w, err)
			return
		}
		f = formOf(d.Job)
	}
	s.renderCronForm(w, http.StatusOK, f, "")
}

func (s *Server) renderCronForm(w http.ResponseWriter, code int, f cronForm, problem string) {
	title := "Add a cron job"
	if f.ID != "" {
		title = "Edit " + f.ID
	}
	preview, perr := f.preview(time.Now())
	if problem == "" && perr != nil && f.filled() {
		problem = perr.Error()
	}
	s.render(w, code, "cronedit", title, map[string]any{"F": f, "Preview": preview, "Problem": problem})
}

func (s *Server) cronSave(w http.ResponseWriter, r *http.Request, c Console) {
	f := readCronForm(r)
	in, err := f.input()
	if err == nil {
		var j schedule.Job
		if j, err = c.CronSave(r.Context(), f.ID, in); err == nil {
			if wantsHTML(r) {
				http.Redirect(w, r, "/cron/job?id="+j.ID, http.StatusSeeOther)
				return
			}
			s.writeRedactedJSON(w, j)
			return
		}
	}
	if !wantsHTML(r) {
		s.backendError(w, badInput(err))
		return
	}
	s.renderCronForm(w, http.StatusBadRequest, f, strings.TrimPrefix(err.Error(), ErrBadInput.Error()+": "))
}

// cronPreview answers the form's schedule in words with its next run, as text, for the
// form's script: "every day at 08:00 Asia/Shanghai — next: Mon 7 Dec 08:00".
func (s *Server) cronPreview(w http.ResponseWriter, r *http.Request) {
	f := readCronForm(r)
	text, err := f.preview(time.Now())
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"preview": text})
}

func (s *Server) logs(w http.ResponseWriter, r *http.Request, c Console) {
	q := logQuery(r)
	q.Limit = 300
	s.render(w, http.StatusOK, "logs", "Logs", map[string]any{"Q": q, "Lines": c.Logs(q),
		"Levels": []string{"debug", "info", "warn", "error"}})
}

func logQuery(r *http.Request) logring.Query {
	v := r.URL.Query()
	after, _ := strconv.ParseUint(v.Get("after"), 10, 64)
	return logring.Query{Level: v.Get("level"), Text: strings.TrimSpace(v.Get("q")), After: after}
}

// logEvents streams the log lines the page's filter selects, as SSE events named "log",
// starting after ?after= (the last line the page shows).
func (s *Server) logEvents(w http.ResponseWriter, r *http.Request, c Console) {
	q := logQuery(r)
	lines, stop := c.FollowLogs()
	defer stop()
	f := sse(w)
	if f == nil {
		return
	}
	for _, l := range c.Logs(q) { // written between the page and this stream
		if s.send(w, f, "log", l) != nil {
			return
		}
		q.After = l.Seq
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			f.Flush()
		case l := <-lines:
			if l.Seq <= q.After || !q.Match(l) {
				continue
			}
			if s.send(w, f, "log", l) != nil {
				return
			}
		}
	}
}

func (s *Server) usage(w http.ResponseWriter, r *http.Request, c Console) {
	days, err := strconv.Atoi(r.URL.Query().Get("days"))
	if err != nil || days < 1 {
		days = 14
	}
	days = min(days, 366)
	rep, err := c.Usage(r.Context(), days)
	if err != nil {
		s.backendError(w, err)
		return
	}
	if r.URL.Query().Get("format") == "json" {
		s.writeRedactedJSON(w, rep)
		return
	}
	s.render(w, http.StatusOK, "usage", "Usage", map[string]any{"R": rep, "Days": days, "Chart": usageChart(rep.Days)})
}

// writeRedactedJSON answers v as JSON with every secret redacted (as the pages are).
func (s *Server) writeRedactedJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.backendError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(s.pages.red.String(string(b))))
}

// badInput marks err as ErrBadInput unless it is already a Backend error.
func badInput(err error) error {
	if isBackendErr(err) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrBadInput, err)
}

func init() { // the management pages' template functions (funcs in pages.go holds the rest)
	funcs["tokens"] = tokenCount
	funcs["money"] = money
	funcs["human"] = func(j schedule.Job) string { return Human(j, time.Now()) }
}

func init() {
	funcs["list"] = func(v ...int) []int { return v }
	funcs["pair"] = func(name string, lines []usage.Line) map[string]any {
		return map[string]any{"Name": name, "Lines": lines}
	}
}
