package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/reefgw/reef/messages"
)

// keepAlive is how often an idle stream gets a comment line, so proxies keep it open.
const keepAlive = 15 * time.Second

// sse prepares w for a Server-Sent Events stream; nil when w cannot flush.
func sse(w http.ResponseWriter) http.Flusher {
	f, ok := w.(http.Flusher)
	if !ok {
		jsonError(w, http.StatusInternalServerError, "streaming unsupported")
		return nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": reef\n\n")
	f.Flush()
	return f
}

// send writes one event (redacted) and flushes.
func (s *Server) send(w http.ResponseWriter, f http.Flusher, event string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, s.pages.red.String(string(b))); err != nil {
		return err
	}
	f.Flush()
	return nil
}

// liveEvents streams the run events of one session (?session=) or of all, of one kind
// (?kind=) or of all, as SSE events named "run" whose data is a messages.RunEvent: first the
// backlog (backlog.go), then each event as it happens.
func (s *Server) liveEvents(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Events == nil {
		jsonError(w, http.StatusServiceUnavailable, "this gateway publishes no run events")
		return
	}
	session, kind := r.URL.Query().Get("session"), r.URL.Query().Get("kind")
	sub := s.cfg.Events.Subscribe(session, 0)
	defer sub.Close()
	f := sse(w)
	if f == nil {
		return
	}
	var sent uint64 // the backlog's newest event: the live ones start after it
	for _, ev := range s.back.events(session, kind) {
		if s.send(w, f, "run", ev) != nil {
			return
		}
		sent = max(sent, ev.Seq)
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
		case ev, ok := <-sub.Events():
			if !ok {
				return
			}
			if ev.Seq != 0 && ev.Seq <= sent || kind != "" && string(ev.Kind) != kind && ev.Kind != messages.EventsLost {
				continue
			}
			if s.send(w, f, "run", ev) != nil {
				return
			}
		}
	}
}

// textOf is what the chat shows of a run event as streamed text.
func textOf(ev messages.RunEvent) string {
	if ev.Kind == messages.RunTextDelta {
		return ev.Text
	}
	return ""
}
