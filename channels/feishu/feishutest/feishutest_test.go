package feishutest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	larkevent "github.com/larksuite/oapi-sdk-go/v3/event"

	"github.com/reefgw/reef/channels/feishu/feishutest"
)

// The fake's crypto must match the SDK's (the platform's) exactly, or the webhook tests prove
// nothing.
func TestEncryptAndSignMatchTheSDK(t *testing.T) {
	for _, plain := range []string{`{}`, `{"a":"0123456789abcdef"}`, `{"text":"飞书 😀"}`} {
		enc, err := feishutest.Encrypt([]byte(plain), "key-1")
		if err != nil {
			t.Fatal(err)
		}
		got, err := larkevent.EventDecrypt(enc, "key-1")
		if err != nil || string(got) != plain {
			t.Errorf("SDK decrypts %q to %q (%v)", plain, got, err)
		}
	}
	if got, want := feishutest.Sign("1700000000", "n1", "key-1", []byte(`{"encrypt":"x"}`)),
		larkevent.Signature("1700000000", "n1", "key-1", `{"encrypt":"x"}`); got != want {
		t.Errorf("Sign = %s, SDK says %s", got, want)
	}
}

func TestEventShape(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{VerificationToken: "vt"})
	payload, eventID, messageID := srv.Event(feishutest.Message{ChatID: "oc_1", ChatType: "group", SenderID: "ou_a",
		Text: "@_user_1 hi", Mentions: []feishutest.Mention{srv.BotMention()}})
	var ev struct {
		Schema string
		Header struct {
			EventID   string `json:"event_id"`
			EventType string `json:"event_type"`
			Token     string
		}
		Event struct {
			Message struct {
				MessageID string `json:"message_id"`
				Content   string
				Mentions  []struct {
					Key string
					ID  struct {
						OpenID string `json:"open_id"`
					}
				}
			}
		}
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	m := ev.Event.Message
	if ev.Schema != "2.0" || ev.Header.EventID != eventID || ev.Header.EventType != "im.message.receive_v1" ||
		ev.Header.Token != "vt" || m.MessageID != messageID || m.Content != `{"text":"@_user_1 hi"}` ||
		len(m.Mentions) != 1 || m.Mentions[0].Key != "@_user_1" || m.Mentions[0].ID.OpenID != srv.BotOpenID {
		t.Errorf("event %s does not look like im.message.receive_v1", payload)
	}
}

// The fake refuses edits as the platform does: another type than text or post, a message the
// bot did not send, a recalled one.
func TestEditRules(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	// call returns the platform code and the message id or tenant token of the answer.
	call := func(method, path, token, body string) (code int, id, newToken string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			Code int
			Data struct {
				MessageID string `json:"message_id"`
			}
			Token string `json:"tenant_access_token"`
		}
		json.NewDecoder(resp.Body).Decode(&r)
		return r.Code, r.Data.MessageID, r.Token
	}
	_, _, tok := call("POST", "/open-apis/auth/v3/tenant_access_token/internal", "", `{"app_id":"`+srv.AppID+`","app_secret":"`+srv.AppSecret+`"}`)
	text := `{"msg_type":"text","content":"{\"text\":\"hi\"}"}`
	code, mine, _ := call("POST", "/open-apis/im/v1/messages?receive_id_type=chat_id", tok, `{"receive_id":"oc_1","msg_type":"text","content":"{\"text\":\"hi\"}"}`)
	if code != 0 {
		t.Fatalf("create = %d", code)
	}
	for name, tc := range map[string]struct {
		id, body string
		want     int
	}{
		"an image":         {mine, `{"msg_type":"image","content":"{\"image_key\":\"k\"}"}`, 230001},
		"a user's message": {srv.UserSays("oc_1", "ou_a", "hello"), text, feishutest.CodeNotYourMessage},
		"a text edit":      {mine, text, 0},
	} {
		if code, _, _ := call("PUT", "/open-apis/im/v1/messages/"+tc.id, tok, tc.body); code != tc.want {
			t.Errorf("editing to %s: code %d, want %d", name, code, tc.want)
		}
	}
	srv.Recall(mine)
	if code, _, _ := call("PUT", "/open-apis/im/v1/messages/"+mine, tok, text); code != feishutest.CodeRecalled {
		t.Errorf("editing a recalled message: code %d, want %d", code, feishutest.CodeRecalled)
	}
}
