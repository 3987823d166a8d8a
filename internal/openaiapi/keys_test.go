package openaiapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Per-key access: the gateway token reaches everything; a key only its agents (another's
// model is not found) and its own sessions (its names under its prefix; another session's key
// or response id is not found, 404, so names do not leak); a wrong token is 401. Requests
// are counted by key name.
func TestKeys(t *testing.T) {
	var mu sync.Mutex
	counted := map[string]int{}
	srv, g := newTestServer(t, func(c *Config) {
		c.Token = "gateway-token-0123456789"
		c.Keys = []Key{{Name: "n8n", Key: "n8n-key-0123456789abc", Agents: []string{"work"}}}
		c.Count = func(k string) { mu.Lock(); counted[k]++; mu.Unlock() }
	})
	code := func(token, method, path, body string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct {
			Error struct{ Code string }
			Data  []struct{ ID string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		if e.Error.Code == "" {
			var ids []string
			for _, m := range e.Data {
				ids = append(ids, m.ID)
			}
			return resp.StatusCode, strings.Join(ids, ",")
		}
		return resp.StatusCode, e.Error.Code
	}
	const owner, key = "gateway-token-0123456789", "n8n-key-0123456789abc"
	chat := func(model, user string) string {
		return `{"model":"` + model + `","user":"` + user + `","messages":[{"role":"user","content":"hi"}]}`
	}
	tests := []struct {
		name, token, method, path, body string
		header                          []string
		status                          int
		want                            string
	}{
		{"no token", "", "GET", "/v1/models", "", nil, 401, "invalid_api_key"},
		{"a wrong token", "nope", "GET", "/v1/models", "", nil, 401, "invalid_api_key"},
		{"the gateway token's models", owner, "GET", "/v1/models", "", nil, 200, "reef/main,reef/work"},
		{"the key's models", key, "GET", "/v1/models", "", nil, 200, "reef/work"},
		{"the key, another agent's model", key, "GET", "/v1/models/reef/main", "", nil, 404, "model_not_found"},
		{"the key, another agent's chat", key, "POST", "/v1/chat/completions", chat("reef/main", "ann"), nil, 404, "model_not_found"},
		{"the key, the owner's session by key", key, "POST", "/v1/chat/completions", chat("reef/work", ""),
			[]string{SessionHeader, "agent:work:openai:direct:ann"}, 404, "session_not_found"},
		{"the key, another channel's session", key, "POST", "/v1/chat/completions", chat("reef/work", ""),
			[]string{SessionHeader, "agent:work:telegram:direct:42"}, 404, "session_not_found"},
		{"the key, the owner's response", key, "POST", "/v1/responses", `{"model":"reef/work","input":"hi","previous_response_id":"` + responseID("ann", "X") + `"}`,
			nil, 404, "previous_response_not_found"},
		{"the owner, another channel's session", owner, "POST", "/v1/chat/completions", chat("reef/work", ""),
			[]string{SessionHeader, "agent:work:telegram:direct:42"}, 403, "session_not_allowed"},
		{"the key, its own session", key, "POST", "/v1/chat/completions", chat("reef/work", "ann"), nil, 200, ""},
		{"the key, its own session by key", key, "POST", "/v1/chat/completions", chat("reef/work", ""),
			[]string{SessionHeader, "agent:work:openai:direct:n8n.ann"}, 200, ""},
		{"the key, its own response", key, "POST", "/v1/responses", `{"model":"reef/work","input":"hi","previous_response_id":"` + responseID("n8n.ann", "X") + `"}`,
			nil, 200, ""},
		{"the owner, its session", owner, "POST", "/v1/chat/completions", chat("reef/work", "ann"), nil, 200, ""},
	}
	for _, tt := range tests {
		status, got := code(tt.token, tt.method, tt.path, tt.body, tt.header...)
		if status != tt.status || got != tt.want {
			t.Errorf("%s: %d %q, want %d %q", tt.name, status, got, tt.status, tt.want)
		}
	}
	var chats []string
	for _, in := range g.delivered() {
		chats = append(chats, in.ChatID)
	}
	if want := []string{"work/n8n.ann", "work/n8n.ann", "work/n8n.ann", "work/ann"}; !slices.Equal(chats, want) {
		t.Errorf("delivered to chats %v, want %v", chats, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if counted["n8n"] != 9 || counted[GatewayKeyName] != 3 {
		t.Errorf("requests counted %v, want n8n 9 and gateway 3", counted)
	}
}
