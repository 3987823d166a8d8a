package openaiapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"
)

// Access: a request presents the gateway token or one of the API keys
// (gateway.http.apiKeys) as "Authorization: Bearer <token>". The gateway token reaches every
// agent and every session of the API. A key reaches only its agents (the others do not
// exist for it: 404, as an unknown model) and only its own sessions: the session names it
// gives are put under its prefix (sessionsPrefix), and a key or response id of a session
// outside it is answered 404, as one that does not exist, so names do not leak.

// Key is an API key of gateway.http.apiKeys.
type Key struct {
	Name   string
	Key    string
	Agents []string // the agent ids it reaches
	// SessionsPrefix is put before the session names the key gives; default "<name>.".
	SessionsPrefix string
}

// GatewayKeyName is the name requests with the gateway token are counted under.
const GatewayKeyName = "gateway"

type keyCtx struct{}

// caller is the key of a request (nil: the gateway token, or no authentication configured).
func caller(r *http.Request) *Key {
	k, _ := r.Context().Value(keyCtx{}).(*Key)
	return k
}

// authenticate checks the request's token and returns the request with its key, or writes
// the 401 and returns nil. With no token and no keys configured it lets every request in
// (the caller authenticated it).
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) *http.Request {
	if h.cfg.Token == "" && len(h.cfg.Keys) == 0 {
		return r
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	cred = strings.TrimSpace(cred)
	if strings.EqualFold(scheme, "Bearer") && cred != "" {
		if h.cfg.Token != "" && equal(cred, h.cfg.Token) {
			h.count(GatewayKeyName)
			return r
		}
		for i := range h.cfg.Keys {
			if k := &h.cfg.Keys[i]; equal(cred, k.Key) {
				h.count(k.Name)
				return r.WithContext(context.WithValue(r.Context(), keyCtx{}, k))
			}
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="reef"`)
	writeError(w, newError(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key",
		"a valid API key is required: send Authorization: Bearer <the gateway token or an API key>"))
	return nil
}

func (h *Handler) count(name string) {
	if h.cfg.Count != nil {
		h.cfg.Count(name)
	}
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// reaches reports whether k may use the agent (a nil key: the gateway token, every agent).
func (k *Key) reaches(agentID string) bool { return k == nil || slices.Contains(k.Agents, agentID) }

// prefix is what the key's session names start with ("" for the gateway token).
func (k *Key) prefix() string {
	switch {
	case k == nil:
		return ""
	case k.SessionsPrefix != "":
		return k.SessionsPrefix
	}
	return k.Name + "."
}

// sessionNotFound answers a key's request for a session outside its own, as if none existed.
func sessionNotFound(from string) *apiError {
	return newError(http.StatusNotFound, "invalid_request_error", "session_not_found", from+" names a session that does not exist")
}
