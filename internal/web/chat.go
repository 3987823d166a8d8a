package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The WebChat routes (only when Config.Chat is set):
//
//	GET  /chat          the page
//	GET  /chat/history  {"session": key, "items": [...]}: the conversation from the transcript
//	POST /chat/send     {"text": "..."} (or a form's text): 202 once reef accepted it durably
//	GET  /chat/events   SSE: "chat" events (webchat.Event: started, progress, reply, final...)
//	                    and "delta" events ({"text"}: the answer as the model writes it)

func (s *Server) chatRoutes() {
	if s.cfg.Chat == nil {
		return
	}
	s.page("GET /chat", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, http.StatusOK, "chat", "Chat", nil)
	})
	s.page("GET /chat/history", s.chatHistory)
	s.page("POST /chat/send", s.chatSend)
	s.page("GET /chat/events", s.chatEvents)
}

// chatKey finds the WebChat conversation's session key: the one the channel saw, else the
// newest stored webchat session.
func (s *Server) chatKey(ctx context.Context) (string, error) {
	if k := s.cfg.Chat.SessionKey(); k != "" {
		return k, nil
	}
	rows, err := s.cfg.Backend.Sessions(ctx, webchat.Name)
	if err != nil {
		return "", err
	}
	for _, r := range rows { // newest first
		if r.Channel == webchat.Name && r.ChatID == webchat.ChatID {
			return r.Key, nil
		}
	}
	return "", nil
}

// chatItem is one line of the chat's history.
type chatItem struct {
	Kind  string    `json:"kind"` // user | assistant | progress | system | reset | summary
	Text  string    `json:"text"`
	Error bool      `json:"error,omitempty"`
	Time  time.Time `json:"time,omitzero"`
}

func (s *Server) chatHistory(w http.ResponseWriter, r *http.Request) {
	key, err := s.chatKey(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	out := struct {
		Session string     `json:"session"`
		Items   []chatItem `json:"items"`
	}{Session: key, Items: []chatItem{}}
	if key != "" {
		c, err := s.cfg.Backend.Conversation(r.Context(), key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			s.backendError(w, err)
			return
		}
		shown := c.Shown
		for _, it := range items(c) {
			for len(shown) > 0 && !it.Time.IsZero() && shown[0].Time.Before(it.Time) {
				out.Items = append(out.Items, shownItems(shown[0])...)
				shown = shown[1:]
			}
			if it.Kind == "system" && agent.IsInternalPrompt(it.Text) {
				continue // reef's instructions to the model (a new session's greeting request) were never shown
			}
			if it.Kind == "system" || it.Kind == "summary" { // events for the model: their first line only
				it.Text = firstLine(it.Text, 120)
			}
			if it.Text != "" || it.Kind == "reset" {
				out.Items = append(out.Items, chatItem{Kind: it.Kind, Text: it.Text, Error: it.Error, Time: it.Time})
			}
			for _, cl := range it.Calls {
				out.Items = append(out.Items, chatItem{Kind: "progress", Text: agent.ToolLabel(cl.Name, cl.Args), Error: cl.Error, Time: it.Time})
			}
		}
		for _, sh := range shown {
			out.Items = append(out.Items, shownItems(sh)...)
		}
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(s.pages.red.String(string(b))))
}

func (s *Server) chatSend(w http.ResponseWriter, r *http.Request) {
	var text string
	if isForm(r) {
		text = r.PostFormValue("text")
	} else {
		var in struct {
			Text *string `json:"text"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				jsonError(w, http.StatusRequestEntityTooLarge, "the message is too large")
				return
			}
			jsonError(w, http.StatusBadRequest, "the body must be JSON like {\"text\": \"hello\"}")
			return
		}
		if in.Text == nil {
			jsonError(w, http.StatusBadRequest, "text is missing")
			return
		}
		text = *in.Text
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	switch err := s.cfg.Chat.Post(ctx, text); {
	case errors.Is(err, webchat.ErrEmpty):
		jsonError(w, http.StatusBadRequest, "the message is empty")
	case errors.Is(err, webchat.ErrTooLong):
		jsonError(w, http.StatusRequestEntityTooLarge, strings.TrimPrefix(err.Error(), "webchat: "))
	case errors.Is(err, webchat.ErrNotRunning):
		jsonError(w, http.StatusServiceUnavailable, "the chat is not running yet: try again in a moment")
	case err != nil:
		s.log.Error().Err(err).Msg("web: chat send")
		jsonError(w, http.StatusServiceUnavailable, "reef could not accept the message: try again")
	default:
		writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
	}
}

// chatEvents streams the conversation's replies and progress, and its run's text as it is
// written.
func (s *Server) chatEvents(w http.ResponseWriter, r *http.Request) {
	events, stop := s.cfg.Chat.Subscribe()
	defer stop()
	// The conversation's key is known once it has a stored session (always, but before its
	// very first message): then only its run events are taken from the bus.
	key, err := s.chatKey(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	var runs <-chan messages.RunEvent
	if s.cfg.Events != nil {
		sub := s.cfg.Events.Subscribe(key, 0)
		defer sub.Close()
		runs = sub.Events()
	}
	f := sse(w)
	if f == nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			_, err = fmt.Fprint(w, ": keepalive\n\n")
			f.Flush()
		case ev, ok := <-events:
			if !ok {
				return
			}
			err = s.send(w, f, "chat", ev)
		case ev, ok := <-runs:
			if !ok {
				runs = nil
				continue
			}
			if key == "" {
				key = s.cfg.Chat.SessionKey() // named by the first run's start
			}
			if t := textOf(ev); t != "" && ev.Session != "" && ev.Session == key {
				err = s.send(w, f, "delta", map[string]string{"text": t})
			}
		}
		if err != nil {
			return
		}
	}
}

// shownItems is a command exchange as the page showed it live: what was typed, the answer.
func shownItems(sh persistence.Shown) []chatItem {
	return []chatItem{{Kind: "user", Text: sh.Command, Time: sh.Time}, {Kind: "assistant", Text: sh.Answer, Time: sh.Time}}
}

// firstLine is the first line of s, cut to n bytes (on a rune boundary) with "…".
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > n {
		s, cut = strings.ToValidUTF8(s[:n], ""), true
	}
	if cut {
		s += " …"
	}
	return s
}
