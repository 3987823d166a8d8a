package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/internal/markdown"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The WebChat routes (only when Config.Chat is set); c names the conversation (its chat id,
// "owner" when absent):
//
//	GET  /chat?c=          the page: the conversations, the one open, its model and thinking
//	GET  /chat/history?c=  {"session": key, "items": [...]}: the conversation from the transcript
//	POST /chat/send        {"chat", "text"} as JSON, or a multipart form (chat, text, file...):
//	                       202 once reef accepted it durably (chat_actions.go)
//	GET  /chat/events?c=   SSE: "chat" events (webchat.Event: started, progress, reply, final...;
//	                       a reply with its Markdown as "html") and "delta" events ({"text"}:
//	                       the answer as the model writes it)
//	POST /chat/new, /chat/rename, /chat/delete, /chat/stop, /chat/model, /chat/think
//	                       (chat_actions.go)

func (s *Server) chatRoutes() {
	if s.cfg.Chat == nil {
		return
	}
	s.page("GET /chat", s.chatPage)
	s.page("GET /chat/history", s.chatHistory)
	s.upload("POST /chat/send", s.chatSend)
	s.page("GET /chat/events", s.chatEvents)
	s.page("POST /chat/new", s.chatNew)
	s.page("POST /chat/rename", s.chatRename)
	s.page("POST /chat/delete", s.chatDelete)
	s.page("POST /chat/stop", s.chatStop)
	s.page("POST /chat/model", s.chatModel)
	s.page("POST /chat/think", s.chatThink)
}

// chatOf is the conversation a request names (?c= or the form's chat), "owner" by default.
func chatOf(r *http.Request) (string, bool) {
	c := r.URL.Query().Get("c")
	if c == "" && r.Method == http.MethodPost && isForm(r) {
		c = r.PostFormValue("chat")
	}
	if c == "" {
		c = webchat.ChatID
	}
	return c, webchat.ValidChat(c)
}

// chatKey finds a conversation's session key: the one the channel saw, else its newest
// stored session ("" before its first message).
func (s *Server) chatKey(ctx context.Context, chat string) (string, error) {
	if k := s.cfg.Chat.SessionKey(chat); k != "" {
		return k, nil
	}
	rows, err := s.cfg.Backend.Sessions(ctx, webchat.Name)
	if err != nil {
		return "", err
	}
	for _, r := range rows { // newest first
		if r.Channel == webchat.Name && r.ChatID == chat && r.Parent == "" {
			return r.Key, nil
		}
	}
	return "", nil
}

// chatItem is one line of the chat's history.
type chatItem struct {
	Kind  string        `json:"kind"` // user | assistant | progress | system | reset | summary
	Text  string        `json:"text"`
	HTML  template.HTML `json:"html,omitempty"` // an answer's Markdown, rendered and safe
	Error bool          `json:"error,omitempty"`
	Time  time.Time     `json:"time,omitzero"`
}

func (s *Server) chatHistory(w http.ResponseWriter, r *http.Request) {
	chat, ok := chatOf(r)
	if !ok {
		jsonError(w, http.StatusBadRequest, "c is not a chat id")
		return
	}
	key, err := s.chatKey(r.Context(), chat)
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
		out.Items = chatItems(c)
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(s.pages.red.String(string(b))))
}

// chatItems lays out a conversation for the chat: the transcript with the command exchanges
// shown in between, tool calls as progress lines, answers with their Markdown rendered.
func chatItems(c Conversation) []chatItem {
	out := []chatItem{}
	shown := c.Shown
	for _, it := range items(c) {
		for len(shown) > 0 && !it.Time.IsZero() && shown[0].Time.Before(it.Time) {
			out = append(out, shownItems(shown[0])...)
			shown = shown[1:]
		}
		if it.Kind == "system" && agent.IsInternalPrompt(it.Text) {
			continue // reef's instructions to the model (a new session's greeting request) were never shown
		}
		if it.Kind == "system" || it.Kind == "summary" { // events for the model: their first line only
			it.Text = firstLine(it.Text, 120)
		}
		if it.Text != "" || it.Kind == "reset" {
			ci := chatItem{Kind: it.Kind, Text: it.Text, Error: it.Error, Time: it.Time}
			if it.Kind == "assistant" {
				ci.HTML = renderMarkdown(it.Text)
			}
			out = append(out, ci)
		}
		for _, cl := range it.Calls {
			out = append(out, chatItem{Kind: "progress", Text: agent.ToolLabel(cl.Name, cl.Args), Error: cl.Error, Time: it.Time})
		}
	}
	for _, sh := range shown {
		out = append(out, shownItems(sh)...)
	}
	return out
}

// renderMarkdown is an answer as safe HTML (internal/markdown writes every tag itself and
// escapes all the text).
func renderMarkdown(s string) template.HTML { return template.HTML(markdown.Render(s)) }

// chatEvent is a webchat.Event as the page gets it: a reply with its Markdown rendered.
type chatEvent struct {
	webchat.Event
	HTML template.HTML `json:"html,omitempty"`
}

// chatEvents streams one conversation's replies and progress, and its run's text as it is
// written.
func (s *Server) chatEvents(w http.ResponseWriter, r *http.Request) {
	chat, ok := chatOf(r)
	if !ok {
		jsonError(w, http.StatusBadRequest, "c is not a chat id")
		return
	}
	events, stop := s.cfg.Chat.Subscribe()
	defer stop()
	// The conversation's key is known once it has a stored session (always, but before its
	// very first message): then only its run events are taken from the bus.
	key, err := s.chatKey(r.Context(), chat)
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
	// Before the conversation's first run names its key, its text may come before the run's
	// start (the bus and the channel are two streams; in a cluster, two nodes): held until then.
	var early []messages.RunEvent
	named := func(k string) error { // the key is known: send the text held for it
		key = k
		held := early
		early = nil
		for _, run := range held {
			if t := textOf(run); t != "" && run.Session == key {
				if err := s.send(w, f, "delta", map[string]string{"text": t}); err != nil {
					return err
				}
			}
		}
		return nil
	}
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
			if ev.Chat != chat {
				continue
			}
			out := chatEvent{Event: ev}
			if ev.Kind == webchat.EventReply {
				out.HTML = renderMarkdown(ev.Text)
			}
			err = s.send(w, f, "chat", out)
			if key == "" && ev.Session != "" && err == nil {
				err = named(ev.Session)
			}
		case ev, ok := <-runs:
			if !ok {
				runs = nil
				continue
			}
			if key == "" {
				if k := s.cfg.Chat.SessionKey(chat); k != "" { // named by the first run's start
					err = named(k)
				}
			}
			if key == "" && textOf(ev) != "" {
				if len(early) == maxEarly { // another conversation's: the newest are this one's
					early = early[1:]
				}
				early = append(early, ev)
			}
			if t := textOf(ev); t != "" && ev.Session != "" && ev.Session == key && err == nil {
				err = s.send(w, f, "delta", map[string]string{"text": t})
			}
		}
		if err != nil {
			return
		}
	}
}

// maxEarly bounds the run events a page holds before its conversation's key is known.
const maxEarly = 256

// shownItems is a command exchange as the page showed it live: what was typed, the answer.
func shownItems(sh persistence.Shown) []chatItem {
	return []chatItem{{Kind: "user", Text: sh.Command, Time: sh.Time},
		{Kind: "assistant", Text: sh.Answer, HTML: renderMarkdown(sh.Answer), Time: sh.Time}}
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
