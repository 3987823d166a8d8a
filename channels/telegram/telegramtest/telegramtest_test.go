package telegramtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

type reply struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

func call(t *testing.T, s *Server, token, method string, params any) (int, reply) {
	t.Helper()
	body, _ := json.Marshal(params)
	resp, err := http.Post(s.URL+"/bot"+token+"/"+method, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: undecodable answer: %v", method, err)
	}
	return resp.StatusCode, r
}

func updateIDs(t *testing.T, r reply) []int {
	t.Helper()
	var ups []struct {
		UpdateID int `json:"update_id"`
	}
	if err := json.Unmarshal(r.Result, &ups); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, u := range ups {
		ids = append(ids, u.UpdateID)
	}
	return ids
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	s := New(t)
	code, r := call(t, s, "654321:AAHanotherTokenXXXXXXXXXXXXXXXXXXXXX", "getMe", nil)
	if code != 401 || r.OK || r.ErrorCode != 401 || r.Description != "Unauthorized" {
		t.Errorf("getMe with a wrong token = %d %+v, want 401 Unauthorized", code, r)
	}
	if code, r := call(t, s, Token, "getMe", nil); code != 200 || !r.OK || !strings.Contains(string(r.Result), `"username":"reef_test_bot"`) {
		t.Errorf("getMe = %d %s, want the bot user", code, r.Result)
	}
}

func TestOffsetSemantics(t *testing.T) {
	s := New(t)
	a, b, c := s.UserSays(1, 1, "a"), s.UserSays(1, 1, "b"), s.UserSays(1, 1, "c")
	_, r := call(t, s, Token, "getUpdates", map[string]any{"limit": 2})
	if got := updateIDs(t, r); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("first batch = %v, want [%d %d]", got, a, b)
	}
	_, r = call(t, s, Token, "getUpdates", map[string]any{"offset": b})
	if got := updateIDs(t, r); len(got) != 2 || got[0] != b || got[1] != c {
		t.Errorf("from offset %d = %v, want [%d %d]", b, got, b, c)
	}
	if s.Confirmed() != b || s.Pending() != 2 {
		t.Errorf("confirmed %d with %d pending, want %d and 2", s.Confirmed(), s.Pending(), b)
	}
	_, r = call(t, s, Token, "getUpdates", map[string]any{"offset": a}) // a lower offset confirms nothing new
	if got := updateIDs(t, r); len(got) != 2 {
		t.Errorf("after a lower offset = %v, want the 2 unconfirmed updates", got)
	}
	_, r = call(t, s, Token, "getUpdates", map[string]any{"offset": c + 1})
	if got := updateIDs(t, r); len(got) != 0 || s.Pending() != 0 {
		t.Errorf("past the last = %v, %d pending; want none", got, s.Pending())
	}
}

func TestLongPoll(t *testing.T) {
	s := New(t)
	got := make(chan []int, 1)
	go func() {
		var ids []int
		defer func() { got <- ids }()
		resp, err := http.Post(s.URL+"/bot"+Token+"/getUpdates", "application/json", strings.NewReader(`{"timeout":30}`))
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		var r struct {
			Result []struct {
				UpdateID int `json:"update_id"`
			} `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Error(err)
		}
		for _, u := range r.Result {
			ids = append(ids, u.UpdateID)
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); s.Calls("getUpdates") == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	id := s.UserSays(1, 1, "wake up")
	select {
	case ids := <-got:
		if len(ids) != 1 || ids[0] != id {
			t.Errorf("long poll returned %v, want [%d]", ids, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll was not woken by a new update")
	}

	start := time.Now()
	_, r := call(t, s, Token, "getUpdates", map[string]any{"offset": id + 1, "timeout": 1})
	if ids := updateIDs(t, r); len(ids) != 0 || time.Since(start) < 900*time.Millisecond {
		t.Errorf("an idle long poll returned %v after %v, want nothing after the 1s timeout", ids, time.Since(start))
	}
}

func TestSendMessageChecks(t *testing.T) {
	s := New(t)
	tests := []struct {
		name, text, mode, wantErr string
	}{
		{"too long", strings.Repeat("😀", Limit/2+1), "", "Bad Request: message is too long"},
		{"long markup, short text", "<b>" + strings.Repeat("x", Limit) + "</b>", "HTML", ""},
		{"unclosed tag", "<b>bold", "HTML", "can't parse entities: Can't find end tag"},
		{"crossed tags", "<b><i>x</b></i>", "HTML", "can't parse entities: Unmatched end tag"},
		{"unknown tag", "a <x> b", "HTML", "can't parse entities: Unsupported start tag"},
		{"bare less-than", "a < b", "HTML", "can't parse entities"},
		{"bare less-than without parse mode", "a < b", "", ""},
		{"empty", " ", "", "Bad Request: message text is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, r := call(t, s, Token, "sendMessage", map[string]any{"chat_id": 7, "text": tt.text, "parse_mode": tt.mode})
			if tt.wantErr == "" {
				if code != 200 || !r.OK {
					t.Errorf("= %d %q, want ok", code, r.Description)
				}
				return
			}
			if code != 400 || r.OK || !strings.Contains(r.Description, tt.wantErr) {
				t.Errorf("= %d %q, want 400 %q", code, r.Description, tt.wantErr)
			}
		})
	}
	if got := s.Sent(7); len(got) != 2 || got[0] != strings.Repeat("x", Limit) || got[1] != "a < b" {
		t.Errorf("Sent = %d texts, want the 2 accepted ones as shown", len(got))
	}
}

func TestInjectedFailures(t *testing.T) {
	s := New(t)
	s.FailNext("sendMessage", 429, 3)
	code, r := call(t, s, Token, "sendMessage", map[string]any{"chat_id": 7, "text": "x"})
	if code != 429 || r.ErrorCode != 429 || r.Parameters.RetryAfter != 3 {
		t.Errorf("= %d %+v, want 429 with retry_after 3", code, r)
	}
	if code, _ := call(t, s, Token, "sendMessage", map[string]any{"chat_id": 7, "text": "x"}); code != 200 {
		t.Errorf("after one injected failure = %d, want 200", code)
	}
	s.Drop()
	if code, _ := call(t, s, Token, "getUpdates", nil); code != 502 {
		t.Errorf("getUpdates after Drop = %d, want 502", code)
	}
	call(t, s, Token, "setWebhook", map[string]any{"url": "https://x.example/hook", "secret_token": "abc"})
	if code, r := call(t, s, Token, "getUpdates", nil); code != 409 || !strings.Contains(r.Description, "webhook is active") {
		t.Errorf("getUpdates with a webhook = %d %q, want 409", code, r.Description)
	}
	if code, _ := call(t, s, Token, "setWebhook", map[string]any{"url": "http://x.example/hook"}); code != 400 {
		t.Errorf("setWebhook with http:// = %d, want 400", code)
	}
	if s.Calls("sendMessage") != 2 || s.Calls("getUpdates") != 2 {
		t.Errorf("calls: sendMessage %d, getUpdates %d; want 2 and 2", s.Calls("sendMessage"), s.Calls("getUpdates"))
	}
}

func TestDownUntilUp(t *testing.T) {
	s := New(t)
	s.Down(502, "sendMessage", "editMessageText")
	for range 3 {
		if code, _ := call(t, s, Token, "sendMessage", map[string]any{"chat_id": 7, "text": "x"}); code != 502 {
			t.Fatalf("sendMessage while down = %d, want 502", code)
		}
	}
	if code, _ := call(t, s, Token, "getMe", nil); code != 200 {
		t.Errorf("getMe while sendMessage is down = %d, want 200", code)
	}
	s.Up()
	if code, _ := call(t, s, Token, "sendMessage", map[string]any{"chat_id": 7, "text": "x"}); code != 200 {
		t.Errorf("sendMessage after Up = %d, want 200", code)
	}
	if got := s.Sent(7); len(got) != 1 || s.Calls("sendMessage") != 4 {
		t.Errorf("sent %q in %d calls, want one message in 4", got, s.Calls("sendMessage"))
	}
}

// LimitEdits refuses a second edit in a chat within the interval (another chat is not held
// back), with 429 and retry_after, and keeps each message's history.
func TestLimitEdits(t *testing.T) {
	s := New(t)
	s.LimitEdits(time.Hour) // nothing in this test waits that long: the second edit is always early
	call(t, s, Token, "sendMessage", map[string]any{"chat_id": 7, "text": "a"})
	call(t, s, Token, "sendMessage", map[string]any{"chat_id": 8, "text": "a"})
	if code, _ := call(t, s, Token, "editMessageText", map[string]any{"chat_id": 7, "message_id": 1, "text": "b"}); code != 200 {
		t.Fatalf("first edit = %d, want 200", code)
	}
	code, r := call(t, s, Token, "editMessageText", map[string]any{"chat_id": 7, "message_id": 1, "text": "c"})
	if code != 429 || r.Parameters.RetryAfter != 1 {
		t.Errorf("second edit within the interval = %d %+v, want 429 with retry_after 1", code, r)
	}
	if code, _ := call(t, s, Token, "editMessageText", map[string]any{"chat_id": 8, "message_id": 1, "text": "b"}); code != 200 {
		t.Errorf("an edit in another chat = %d, want 200", code)
	}
	if s.RateLimited() != 1 {
		t.Errorf("RateLimited = %d, want 1", s.RateLimited())
	}
	if h := s.Messages(7)[0].History; !slices.Equal(h, []string{"a", "b"}) {
		t.Errorf("history = %q, want [a b]", h)
	}
}
