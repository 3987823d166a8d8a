package feishutest_test

import (
	"encoding/json"
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
