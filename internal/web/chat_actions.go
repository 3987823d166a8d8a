package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reefgw/reef/channels/webchat"
)

// WebChat's page and its actions. Every action that changes a conversation's run or
// settings posts the command a person would type (/stop, /model, /think) into it, so it
// goes through the same code as the commands; the answer appears in the chat.

// chatRow is one conversation in the chat's list.
type chatRow struct {
	ID, Title, Key, Agent, Model, Think string
	Updated                             time.Time
	Live                                bool
}

// chatView is the chat page.
type chatView struct {
	Chats    []chatRow
	Current  chatRow
	Models   []string // the current conversation's /model choices, its agent's model first
	Thinks   []string
	Starters []string
}

// starters are the empty conversation's suggestions.
var starters = []string{
	"What can you do for me?",
	"What files are in your workspace?",
	"Summarize what we talked about last time.",
	"Remind me every morning at 8 to check my mail.",
}

func (s *Server) chatBackend() ChatBackend { return s.cfg.Backend.(ChatBackend) }

// chatList lists the conversations, newest first: every WebChat session (not a sub-agent)
// and every conversation created here, without those deleted.
func (s *Server) chatList(ctx context.Context) ([]chatRow, map[string]Chat, error) {
	recs, err := s.chatBackend().Chats(ctx)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.cfg.Backend.Sessions(ctx, webchat.Name)
	if err != nil {
		return nil, nil, err
	}
	var out []chatRow
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Channel != webchat.Name || r.Parent != "" || !webchat.ValidChat(r.ChatID) || seen[r.ChatID] {
			continue
		}
		seen[r.ChatID] = true
		rec := recs[r.ChatID]
		if rec.Deleted {
			continue
		}
		out = append(out, chatRow{ID: r.ChatID, Title: chatTitle(rec, r.Created), Key: r.Key, Agent: r.AgentID,
			Model: r.Model, Think: r.Think, Updated: r.Updated, Live: r.Live})
	}
	for id, rec := range recs {
		if !seen[id] && !rec.Deleted {
			out = append(out, chatRow{ID: id, Title: chatTitle(rec, rec.Created), Updated: rec.Created})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, recs, nil
}

// chatTitle is a conversation's name: the one given, else when it began.
func chatTitle(rec Chat, created time.Time) string {
	if rec.Title != "" {
		return rec.Title
	}
	if created.IsZero() {
		return "New chat"
	}
	return "Chat of " + created.Local().Format("Jan 2 15:04")
}

func (s *Server) chatPage(w http.ResponseWriter, r *http.Request) {
	list, recs, err := s.chatList(r.Context())
	if err != nil {
		s.backendError(w, err)
		return
	}
	v := chatView{Chats: list, Thinks: ThinkLevels, Starters: starters}
	chat := r.URL.Query().Get("c")
	switch {
	case chat == "" && len(list) > 0:
		v.Current = list[0]
	case chat == "":
		v.Current = chatRow{ID: webchat.ChatID, Title: "New chat"}
	case !webchat.ValidChat(chat):
		jsonError(w, http.StatusBadRequest, "c is not a chat id")
		return
	default:
		i := slices.IndexFunc(list, func(c chatRow) bool { return c.ID == chat })
		if i >= 0 {
			v.Current = list[i]
		} else { // a deleted one, or one opened from Sessions: it can be continued
			v.Current = chatRow{ID: chat, Title: chatTitle(recs[chat], recs[chat].Created)}
			if key, err := s.chatKey(r.Context(), chat); err == nil && key != "" {
				v.Current.Key = key
			}
		}
	}
	if v.Models, err = s.chatBackend().ChatModels(r.Context(), v.Current.Agent); err != nil {
		s.backendError(w, err)
		return
	}
	if v.Current.Think == "" {
		v.Current.Think = "default"
	}
	s.render(w, http.StatusOK, "chat", "Chat", v)
}

// maxUploadBody bounds a message with files (each file also within its kind's media limit).
const maxUploadBody = 64 << 20

// maxFiles is how many files one message may carry.
const maxFiles = 10

// upload registers a route that takes files: its body limit applies before anything reads
// the body (the CSRF check of a form included).
func (s *Server) upload(pattern string, h http.HandlerFunc) {
	protected := s.protect(h)
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody)
		protected.ServeHTTP(w, r)
	}))
}

func (s *Server) chatSend(w http.ResponseWriter, r *http.Request) {
	var m webchat.Message
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if !s.readUpload(w, r, &m) {
			return
		}
	} else if !readChatJSON(w, r, &m) {
		return
	}
	if m.Chat == "" {
		m.Chat = webchat.ChatID
	}
	if !webchat.ValidChat(m.Chat) {
		jsonError(w, http.StatusBadRequest, "chat is not a chat id")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if !s.post(ctx, w, m) {
		return
	}
	s.noteChat(ctx, m)
	writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
}

// readChatJSON reads {"chat": "...", "text": "..."} (or a url-encoded form).
func readChatJSON(w http.ResponseWriter, r *http.Request, m *webchat.Message) bool {
	if isForm(r) {
		m.Chat, m.Text = r.PostFormValue("chat"), r.PostFormValue("text")
		return true
	}
	var in struct {
		Chat string  `json:"chat"`
		Text *string `json:"text"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			jsonError(w, http.StatusRequestEntityTooLarge, "the message is too large")
			return false
		}
		jsonError(w, http.StatusBadRequest, "the body must be JSON like {\"chat\": \"owner\", \"text\": \"hello\"}")
		return false
	}
	if in.Text == nil {
		jsonError(w, http.StatusBadRequest, "text is missing")
		return false
	}
	m.Chat, m.Text = in.Chat, *in.Text
	return true
}

// readUpload reads a multipart message: chat, text and files, each file kept by the channel
// (webchat.Channel.Upload) within its kind's limit.
func (s *Server) readUpload(w http.ResponseWriter, r *http.Request, m *webchat.Message) bool {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			jsonError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the message is over %d MB with its files", maxUploadBody>>20))
			return false
		}
		jsonError(w, http.StatusBadRequest, "a malformed multipart form")
		return false
	}
	defer r.MultipartForm.RemoveAll()
	m.Chat, m.Text = r.PostFormValue("chat"), r.PostFormValue("text")
	files := r.MultipartForm.File["file"]
	if len(files) > maxFiles {
		jsonError(w, http.StatusBadRequest, fmt.Sprintf("%d files; a message takes at most %d", len(files), maxFiles))
		return false
	}
	for _, fh := range files {
		f, err := fh.Open()
		if err != nil {
			jsonError(w, http.StatusBadRequest, "could not read an uploaded file")
			return false
		}
		md, err := s.cfg.Chat.Upload(fh.Filename, fh.Header.Get("Content-Type"), f)
		f.Close()
		switch {
		case errors.Is(err, webchat.ErrTooLarge):
			jsonError(w, http.StatusRequestEntityTooLarge, strings.TrimPrefix(err.Error(), "webchat: "))
			return false
		case errors.Is(err, webchat.ErrEmpty), errors.Is(err, webchat.ErrNoUploads):
			jsonError(w, http.StatusBadRequest, strings.TrimPrefix(err.Error(), "webchat: "))
			return false
		case err != nil:
			s.log.Error().Err(err).Msg("web: chat upload")
			jsonError(w, http.StatusInternalServerError, "reef could not keep the file: see the gateway's log")
			return false
		}
		m.Media = append(m.Media, md)
	}
	return true
}

// post hands m to the channel and answers the errors it can give; true when accepted.
func (s *Server) post(ctx context.Context, w http.ResponseWriter, m webchat.Message) bool {
	switch err := s.cfg.Chat.Post(ctx, m); {
	case errors.Is(err, webchat.ErrEmpty):
		jsonError(w, http.StatusBadRequest, "the message is empty")
	case errors.Is(err, webchat.ErrBadChat):
		jsonError(w, http.StatusBadRequest, "chat is not a chat id")
	case errors.Is(err, webchat.ErrTooLong):
		jsonError(w, http.StatusRequestEntityTooLarge, strings.TrimPrefix(err.Error(), "webchat: "))
	case errors.Is(err, webchat.ErrNotRunning):
		jsonError(w, http.StatusServiceUnavailable, "the chat is not running yet: try again in a moment")
	case err != nil:
		s.log.Error().Err(err).Msg("web: chat send")
		jsonError(w, http.StatusServiceUnavailable, "reef could not accept the message: try again")
	default:
		return true
	}
	return false
}

// noteChat keeps a conversation's record up to date after a message: named after its first
// line when it has no name, shown again if it was deleted.
func (s *Server) noteChat(ctx context.Context, m webchat.Message) {
	recs, err := s.chatBackend().Chats(ctx)
	if err != nil {
		s.log.Warn().Err(err).Msg("web: chat records")
		return
	}
	rec, ok := recs[m.Chat]
	text := strings.TrimSpace(m.Text)
	if ok && rec.Title != "" && !rec.Deleted || strings.HasPrefix(text, "/") {
		return
	}
	if !ok {
		rec = Chat{ID: m.Chat, Created: time.Now()}
	}
	if rec.Title == "" {
		switch {
		case text != "":
			rec.Title = firstLine(text, 48)
		case len(m.Media) > 0:
			rec.Title = m.Media[0].Name
		}
	}
	rec.Deleted = false
	if err := s.chatBackend().PutChat(ctx, rec); err != nil {
		s.log.Warn().Err(err).Msg("web: chat record")
	}
}

func (s *Server) chatNew(w http.ResponseWriter, r *http.Request) {
	rec := Chat{ID: webchat.NewChat(), Created: time.Now()}
	if err := s.chatBackend().PutChat(r.Context(), rec); err != nil {
		s.backendError(w, err)
		return
	}
	if wantsHTML(r) {
		http.Redirect(w, r, "/chat?c="+rec.ID, http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"chat": rec.ID})
}

// formChat is the conversation a form names; it answers 400 when it names none.
func formChat(w http.ResponseWriter, r *http.Request) (string, bool) {
	chat := r.PostFormValue("chat")
	if !webchat.ValidChat(chat) {
		jsonError(w, http.StatusBadRequest, "chat is required: a chat id")
		return "", false
	}
	return chat, true
}

func (s *Server) chatRename(w http.ResponseWriter, r *http.Request) {
	chat, ok := formChat(w, r)
	if !ok {
		return
	}
	title := strings.Join(strings.Fields(r.PostFormValue("title")), " ")
	if title == "" || len(title) > 120 {
		jsonError(w, http.StatusBadRequest, "title must be 1 to 120 characters")
		return
	}
	s.done(w, r, "/chat?c="+chat, s.updateChat(r.Context(), chat, func(c *Chat) { c.Title = title }))
}

func (s *Server) chatDelete(w http.ResponseWriter, r *http.Request) {
	chat, ok := formChat(w, r)
	if !ok {
		return
	}
	key, err := s.chatKey(r.Context(), chat)
	if err != nil {
		s.backendError(w, err)
		return
	}
	if key != "" { // its run, sub-agents and background processes stop, as with /stop
		if !s.post(r.Context(), w, webchat.Message{Chat: chat, Text: "/stop"}) {
			return
		}
	}
	s.done(w, r, "/chat", s.updateChat(r.Context(), chat, func(c *Chat) { c.Deleted = true }))
}

// updateChat changes a conversation's record (made if it has none).
func (s *Server) updateChat(ctx context.Context, chat string, change func(*Chat)) error {
	recs, err := s.chatBackend().Chats(ctx)
	if err != nil {
		return err
	}
	rec, ok := recs[chat]
	if !ok {
		rec = Chat{ID: chat, Created: time.Now()}
	}
	change(&rec)
	return s.chatBackend().PutChat(ctx, rec)
}

func (s *Server) chatStop(w http.ResponseWriter, r *http.Request) {
	s.command(w, r, "/stop")
}

// modelName reports whether s is what the model picker may send: a model reference (letters,
// digits and ._:/@+-, starting with a letter or digit, at most 200 bytes), nothing a command
// could read as more arguments. (A regexp with {0,199} costs hundreds of KB at start-up.)
func modelName(s string) bool {
	if s == "" || len(s) > 200 || !alnum(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) && !strings.ContainsRune("._:/@+-", rune(s[i])) {
			return false
		}
	}
	return true
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

func (s *Server) chatModel(w http.ResponseWriter, r *http.Request) {
	model := r.PostFormValue("model")
	if !modelName(model) {
		jsonError(w, http.StatusBadRequest, "model must be a model name such as openai/gpt-4o")
		return
	}
	s.command(w, r, "/model "+model)
}

func (s *Server) chatThink(w http.ResponseWriter, r *http.Request) {
	level := r.PostFormValue("level")
	if !slices.Contains(ThinkLevels, level) {
		jsonError(w, http.StatusBadRequest, "level must be one of "+strings.Join(ThinkLevels, ", "))
		return
	}
	s.command(w, r, "/think "+level)
}

// command posts a command into the form's conversation, as if typed there.
func (s *Server) command(w http.ResponseWriter, r *http.Request, text string) {
	chat, ok := formChat(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if !s.post(ctx, w, webchat.Message{Chat: chat, Text: text}) {
		return
	}
	s.done(w, r, "/chat?c="+chat, nil)
}
