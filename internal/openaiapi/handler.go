// Package openaiapi is reef's OpenAI-compatible API: GET /v1/models lists the agents as
// models (reef/<agentId>), POST /v1/chat/completions runs one and answers in OpenAI's format,
// streamed (SSE) or not, with the run's usage; POST /v1/responses is the same in the Responses
// API's shape (responses.go). A request's tools are the client's own (tools.go): a run whose
// model calls one ends with the call, and the next request's results continue it.
//
// A request is a message on the channel "openai" (Channel): it goes the way every channel's
// message goes (the Connector stores it in its session's inbox before the run, the Session
// queues and runs it, the transcript keeps it). A request naming a session (the
// X-Reef-Session header or the request's user field) continues it with its last user message.
// One naming none is stateless: its last message is the turn and the ones before it the
// conversation (messages.Inbound.Context), run in a session of its own that the Session
// deletes with the run's record (sessionkey.IsStateless). The handler authenticates its
// callers (keys.go): whoever presents the gateway token is the owner; an API key reaches its
// agents and its own sessions only, as a guest.
//
// Concurrency: Handler is safe for concurrent use; each request runs on its server
// goroutine and waits for its answer there. Channel's state is guarded by its mutex. The
// package starts no goroutine; a request that gave up leaves a timer (orphanTTL) that frees
// its session should its run never end, stopped when the run ends.
package openaiapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/sessionkey"
)

// SessionHeader names the session a request continues; it wins over the body's user field.
// A request with neither is stateless.
const SessionHeader = "X-Reef-Session"

// SessionKeyHeader, on a response, is the key of the session that answered (reef sessions show <key>).
const SessionKeyHeader = "X-Reef-Session-Key"

// StatelessSender is the sender of a stateless request (one that names no session): it runs
// in a session of its own, on the conversation its messages carry, deleted after its run.
const StatelessSender = "api"

// Agent is an agent the API offers, as the model reef/<ID>.
type Agent struct {
	ID   string
	Name string
}

// Config configures the handler.
type Config struct {
	Channel *Channel // the channel the gateway runs as "openai"
	Agents  []Agent
	// DMScope is the gateway's session.dmScope: the API's sessions are keyed like direct
	// messages (sessionkey.For), agent:<id>:openai:direct:<name> by default.
	DMScope    string
	MaxBody    int64         // bytes of a request body; default 4 MiB
	MaxMessage int           // bytes of the message the agent gets; default 32 KiB (session.maxInbound)
	Timeout    time.Duration // how long a request waits for its answer; default 15 min
	// Events, when set, is the gateway's run-event bus: a streamed answer then shows the
	// agent's text as the model writes it (text.delta, a word at a time), not only the reply
	// when the run ends.
	Events *events.Bus
	// HasTool reports whether an agent has a tool of that name: a request's tool named like
	// one is refused. nil: none is refused here (the agent's own tool still wins in the run).
	HasTool func(agentID, name string) bool
	// Token is the gateway token and Keys the API keys (keys.go); a request must present one
	// of them. With neither, the handler checks nobody: its mount authenticates.
	Token string
	Keys  []Key
	// Count, when set, counts each authenticated request by its key's name (GatewayKeyName
	// for the gateway token): /metrics' reef_api_requests_total.
	Count func(key string)
	Log   zerolog.Logger
	Now   func() time.Time // default time.Now
}

// MaxImages caps the image_url parts of a request's new turn (a model sees the latest
// media.MaxImages of a conversation).
const MaxImages = 10

// Defaults of Config.
const (
	DefaultMaxBody    = 4 << 20
	DefaultMaxMessage = 32 << 10
	DefaultTimeout    = 15 * time.Minute
)

// Handler serves the API.
type Handler struct {
	cfg     Config
	mux     *http.ServeMux
	started int64 // unix seconds, the models' "created"
}

// New returns the API's handler, serving /v1/models and /v1/chat/completions.
func New(cfg Config) *Handler {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), started: cfg.Now().Unix()}
	h.mux.HandleFunc("GET /v1/models", h.models)
	h.mux.HandleFunc("GET /v1/models/{id...}", h.model)
	h.mux.HandleFunc("POST /v1/chat/completions", h.chat)
	h.mux.HandleFunc("POST /v1/responses", h.responses)
	h.mux.HandleFunc("/v1/responses", methodNotAllowed("POST"))
	h.mux.HandleFunc("/v1/models", methodNotAllowed("GET"))
	h.mux.HandleFunc("/v1/chat/completions", methodNotAllowed("POST"))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(http.StatusNotFound, "invalid_request_error", "unknown_url",
			"reef serves GET /v1/models, POST /v1/chat/completions and POST /v1/responses"))
	})
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r = h.authenticate(w, r); r != nil { // keys.go
		h.mux.ServeHTTP(w, r)
	}
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, newError(http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed",
			r.Method+" is not allowed here; use "+allow))
	}
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	list := make([]model, 0, len(h.cfg.Agents))
	for _, a := range h.cfg.Agents {
		if caller(r).reaches(a.ID) {
			list = append(list, h.modelOf(a))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": list})
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request) {
	a, err := h.agent(r.PathValue("id"), caller(r))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h.modelOf(a))
}

func (h *Handler) modelOf(a Agent) model {
	return model{ID: "reef/" + a.ID, Object: "model", Created: h.started, OwnedBy: "reef", Name: a.Name}
}

// agent is the agent a model names: reef/<id>.
// A key's request sees only the agents the key reaches (keys.go).
func (h *Handler) agent(name string, k *Key) (Agent, *apiError) {
	if name == "" {
		return Agent{}, badRequest("missing_model", "model is required: one of "+h.modelNames(k))
	}
	id, ok := strings.CutPrefix(name, "reef/")
	for _, a := range h.cfg.Agents {
		if ok && a.ID == id && k.reaches(a.ID) {
			return a, nil
		}
	}
	return Agent{}, newError(http.StatusNotFound, "invalid_request_error", "model_not_found",
		fmt.Sprintf("the model %q does not exist; reef offers %s", name, h.modelNames(k)))
}

func (h *Handler) modelNames(k *Key) string {
	var names []string
	for _, a := range h.cfg.Agents {
		if k.reaches(a.ID) {
			names = append(names, "reef/"+a.ID)
		}
	}
	return strings.Join(names, ", ")
}

// ask is one checked request: what to deliver, and how to answer.
type ask struct {
	agent     Agent
	session   string // the session's name; "" for a stateless request
	chat      string // the channel's chat id: agent and session (or the request's own id)
	key       string // the session's key
	text      string
	media     []messages.Media       // the new turn's images (media.go)
	context   []messages.ChatMessage // a stateless request's conversation before text
	results   []messages.ChatMessage // the tool results the request ends with (conversation.go)
	client    *messages.ClientTools  // the request's tools (tools.go)
	guest     bool                   // an API key's request: a guest's rights (keys.go)
	stateless bool
	maxTokens int // caps each model call of the run; 0: the model's own
	stream    bool
	usage     bool // stream_options.include_usage: send the usage chunk
	model     string
}

// parse checks a request; nothing is stored for one it refuses.
func (h *Handler) parse(w http.ResponseWriter, r *http.Request) (*ask, *apiError) {
	var req chatRequest
	if err := h.decode(w, r, &req); err != nil {
		return nil, err
	}
	a, aerr := h.agent(req.Model, caller(r))
	if aerr != nil {
		return nil, aerr
	}
	maxTokens, oerr := req.outputCap()
	if oerr != nil {
		return nil, oerr
	}
	if len(req.Messages) == 0 {
		return nil, badRequest("missing_messages", "messages is required: at least one message with role user")
	}
	name, serr := h.session(a, caller(r), r.Header.Get(SessionHeader), req.User)
	if serr != nil {
		return nil, serr
	}
	q := &ask{agent: a, session: name, stateless: name == "", stream: req.Stream, model: req.Model, maxTokens: maxTokens,
		usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage, guest: caller(r) != nil}
	specs, err := chatSpecs(req.Tools)
	if err != nil {
		return nil, err
	}
	return h.build(q, req.Messages, toolRequest{specs: specs, choice: req.ToolChoice, parallel: req.ParallelToolCalls, param: "tools"})
}

// decode reads a request's JSON body into v.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return newError(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large",
				fmt.Sprintf("the request body is over %d bytes", h.cfg.MaxBody))
		}
		return badRequest("invalid_json", "the request body is not valid JSON: "+err.Error())
	}
	return nil
}

// build completes q from the request's messages and tools: its new turn, the conversation
// before it (stateless), the client's tools, and its chat and session key.
func (h *Handler) build(q *ask, msgs []chatMessage, tr toolRequest) (*ask, *apiError) {
	a := q.agent
	var err *apiError
	if q.client, err = h.clientTools(a, tr); err != nil {
		return nil, err
	}
	var tn turn
	if q.stateless {
		tn, err = conversation(msgs)
	} else {
		tn, err = newTurn(msgs)
	}
	if err != nil {
		return nil, err
	}
	q.text, q.context, q.results = tn.text, tn.context, tn.results
	if err := h.checkTurn(q, tn.images); err != nil {
		return nil, err
	}
	if q.stateless {
		q.chat = a.ID + "/" + rand.Text() // a session of its own, for this request only
	} else {
		q.chat = a.ID + "/" + q.session
	}
	q.key = sessionkey.ForSender(a.ID, h.cfg.DMScope, q.inbound(""), !q.guest) // as the Connector keys it
	return q, nil
}

// checkTurn checks the new turn's images and size, and reads the images.
func (h *Handler) checkTurn(q *ask, images []string) *apiError {
	if len(images) > MaxImages {
		return badRequest("too_many_images", fmt.Sprintf("the last message has %d images; the limit is %d", len(images), MaxImages))
	}
	for i, ref := range images {
		m, err := imageMedia(i+1, ref)
		if err != nil {
			return badRequest("invalid_image_url", fmt.Sprintf("image %d of the last message: %v", i+1, err))
		}
		q.media = append(q.media, m)
	}
	size := len(q.text)
	for _, r := range q.results {
		size += len(r.Content)
	}
	switch {
	case strings.TrimSpace(q.text) == "" && len(q.media) == 0 && len(q.results) == 0:
		return badRequest("empty_message", "the last message is empty")
	case size > h.cfg.MaxMessage:
		return newError(http.StatusRequestEntityTooLarge, "invalid_request_error", "message_too_long",
			fmt.Sprintf("the new turn (the last user message or tool results) is %d bytes; the limit is %d", size, h.cfg.MaxMessage))
	}
	return nil
}

// sessionName is what a session name may be: an id, a user name or an e-mail address.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$`)

// session is the name of the session a request continues: the header's, else the user
// field's, else DefaultSession. The header may also give the full key of one of the API's
// sessions of this agent; a key of any other session (another channel's conversation, a
// sub-agent, another agent's) is refused: the API may use only its own.
//
// A key's names are put under its prefix, and a key of a session outside it is not found
// (keys.go).
func (h *Handler) session(a Agent, k *Key, header, user string) (string, *apiError) {
	name, from := header, SessionHeader
	if name == "" {
		name, from = user, "user"
	}
	if name == "" {
		return "", nil // stateless
	}
	if strings.HasPrefix(name, "agent:") {
		i := strings.LastIndexByte(name, ':')
		short := name[i+1:]
		if from != SessionHeader || !sessionName.MatchString(short) ||
			sessionkey.ForSender(a.ID, h.cfg.DMScope, (&ask{session: short}).inbound(""), k == nil) != name || !strings.HasPrefix(short, k.prefix()) {
			if k != nil {
				return "", sessionNotFound(from)
			}
			return "", newError(http.StatusForbidden, "permission_error", "session_not_allowed",
				fmt.Sprintf("%s names a session the API may not use: only the API's own sessions of reef/%s are open to it (a name, or a key like %s)",
					from, a.ID, sessionkey.For(a.ID, h.cfg.DMScope, (&ask{session: "<name>"}).inbound(""))))
		}
		return short, nil
	}
	if !sessionName.MatchString(name) || !sessionName.MatchString(k.prefix()+name) {
		return "", badRequest("invalid_session", from+" must be 1 to 128 letters, digits and . _ @ + - (starting with a letter or digit)")
	}
	return k.prefix() + name, nil
}

// inbound is the message of the ask.
func (q *ask) inbound(msgID string) *messages.Inbound {
	sender := q.session
	if q.stateless {
		sender = StatelessSender
	}
	return &messages.Inbound{Channel: Name, ChatID: q.chat, ChatType: messages.ChatDirect, SenderID: sender,
		SenderName: sender, MessageID: msgID, Text: q.text, Media: q.media, Agent: q.agent.ID, Stateless: q.stateless, Context: q.context, MaxTokens: q.maxTokens,
		ClientTools: q.client, ToolResults: q.results, Guest: q.guest}
}

func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	q, aerr := h.parse(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	h.run(w, r, q, func(id string) string { return "chatcmpl-" + id },
		func(ctx context.Context, ex *exchange, rs *reply, live *events.Subscription) error {
			if q.stream {
				return h.stream(ctx, w, ex, rs, live, q.usage)
			}
			return h.await(ctx, w, ex, rs)
		})
}

// responder writes a run's answer in the format of its API; an error means the request gave
// up waiting.
type responder func(ctx context.Context, ex *exchange, rs *reply, live *events.Subscription) error

// run hands a checked request to reef and answers it with respond; the answer's id is
// newID of the request's random id.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, q *ask, newID func(string) string, respond responder) {
	if h.cfg.Channel == nil {
		writeError(w, newError(http.StatusServiceUnavailable, "server_error", "unavailable", errNotRunning.Error()))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	msgID := "api-" + rand.Text()
	ex, deliver, err := h.cfg.Channel.open(ctx, q.chat, msgID)
	if err != nil {
		writeError(w, h.notTaken(r, err, "another request of this session is still being answered; try again when it is done"))
		return
	}
	in := q.inbound(msgID)
	in.Time = h.cfg.Now()
	var live *events.Subscription // the run's text as it is written (streamed answers)
	if q.stream && h.cfg.Events != nil {
		live = h.cfg.Events.Subscribe(q.key, liveBuffer)
		defer live.Close()
	}
	if err := deliver(ctx, *in); err != nil {
		h.cfg.Channel.abandon(q.chat, ex, false)
		h.cfg.Log.Warn().Err(err).Str("session", q.key).Msg("openai api: message not accepted")
		writeError(w, h.notTaken(r, err, "reef could not take the message"))
		return
	}
	if !q.stateless {
		w.Header().Set(SessionKeyHeader, q.key)
	}
	rs := &reply{id: newID(msgID[len("api-"):]), model: q.model, created: h.cfg.Now().Unix()}
	if err := respond(ctx, ex, rs, live); err != nil {
		h.cfg.Channel.abandon(q.chat, ex, true)
	}
}

// notTaken is the error of a request whose message reef did not take: nothing was stored.
func (h *Handler) notTaken(r *http.Request, err error, what string) *apiError {
	switch {
	case errors.Is(err, errNotRunning):
		return newError(http.StatusServiceUnavailable, "server_error", "unavailable", err.Error())
	case r.Context().Err() != nil:
		return newError(499, "invalid_request_error", "client_closed", "the client went away")
	case errors.Is(err, context.DeadlineExceeded):
		return newError(http.StatusTooManyRequests, "rate_limit_error", "session_busy", what)
	}
	return newError(http.StatusServiceUnavailable, "server_error", "unavailable", what+"; try again")
}
