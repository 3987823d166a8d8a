package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mymmrac/telego"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

// canary is a token whose secret part is easy to find in any text.
const canary = "424242:CANARYsecretCANARYsecretCANARY_1234"

func assertNoToken(t *testing.T, what, text string) {
	t.Helper()
	_, secret, _ := strings.Cut(canary, ":")
	if strings.Contains(text, secret) {
		t.Errorf("%s contains the bot token: %s", what, text)
	}
}

// TestTokenNeverInErrorsOrLogs points the bot at servers that fail in the ways that put
// URLs into errors (connection refused, 500, a connection closed mid-poll) and checks the
// token appears in no error and no log line.
func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom at "+r.URL.Path, http.StatusInternalServerError)
	}))
	defer failing.Close()

	for name, root := range map[string]string{"connection refused": refused, "500": failing.URL} {
		t.Run(name, func(t *testing.T) {
			s := telegramtest.NewWithToken(t, canary)
			b, logs := newTestBot(t, s, func(c *Config) { c.Token, c.APIRoot = canary, root })
			ctx := context.Background()
			_, done := run(t, b, newInbox().deliver)
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Run succeeded against a failing server")
				}
				assertNoToken(t, "Run's error", err.Error())
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return")
			}
			_, err := b.Send(ctx, messages.Outbound{ChatID: "5", Text: "hi"})
			if err == nil {
				t.Fatal("Send succeeded against a failing server")
			}
			assertNoToken(t, "Send's error", err.Error())
			assertNoToken(t, "Typing's error", errorText(b.Typing(ctx, "5")))
			assertNoToken(t, "Edit's error", errorText(b.Edit(ctx, "5", "5:1", "x")))
			assertNoToken(t, "the logs", logs.String())
		})
	}

	t.Run("dropped poll", func(t *testing.T) {
		s := telegramtest.NewWithToken(t, canary)
		b, logs := newTestBot(t, s, func(c *Config) { c.Token = canary })
		box := newInbox()
		run(t, b, box.deliver)
		eventually(t, "a poll is waiting", func() bool { return s.Calls("getUpdates") >= 1 })
		s.Drop()
		s.UserSays(5, 5, "after the drop")
		box.next(t)
		if !contains(logs.String(), "getUpdates failed") {
			t.Errorf("no log line for the dropped poll:\n%s", logs)
		}
		assertNoToken(t, "the logs", logs.String())
	})
}

func TestRedactedErrorKeepsIs(t *testing.T) {
	err := redactError(context.Canceled, canary)
	if !errors.Is(err, context.Canceled) {
		t.Error("redacted error lost context.Canceled")
	}
	got := redact("GET https://api.telegram.org/bot"+canary+"/getMe and "+strings.SplitN(canary, ":", 2)[1], canary)
	if want := "GET https://api.telegram.org/bot<redacted>/getMe and <redacted>"; got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRequestBodiesAsTelegoEncodesThem: the calls whose chat_id reef encodes itself send the
// same JSON as telego's own encoding of their parameters.
func TestRequestBodiesAsTelegoEncodesThem(t *testing.T) {
	num, name := telego.ChatID{ID: -1001234567890}, telego.ChatID{Username: "@reef_news"}
	cases := []any{
		&telego.SendMessageParams{ChatID: num, Text: "a <b>reply</b> & more", ParseMode: "HTML", MessageThreadID: 7,
			ReplyParameters: &telego.ReplyParameters{MessageID: 42}},
		&telego.SendMessageParams{ChatID: name, Text: "…"},
		&telego.EditMessageTextParams{ChatID: num, MessageID: 9, Text: "edited"},
		&telego.EditMessageTextParams{InlineMessageID: "inline-1", Text: "no chat"},
		&telego.SendChatActionParams{ChatID: num, Action: "typing"},
		&telego.DeleteMessageParams{ChatID: name, MessageID: 3},
		&telego.GetUpdatesParams{Offset: 5, Timeout: 30},
	}
	for _, params := range cases {
		want, err := json.Marshal(params) // through telego.ChatID's MarshalJSON
		if err != nil {
			t.Fatal(err)
		}
		req, err := stdJSONConstructor{}.JSONRequest(params)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(req.BodyRaw), `"chat_id"`); n > 1 {
			t.Errorf("%T: chat_id %d times in %s", params, n, req.BodyRaw)
		}
		var got, exp map[string]any
		if err := json.Unmarshal(req.BodyRaw, &got); err != nil {
			t.Fatalf("%T: %s: %v", params, req.BodyRaw, err)
		}
		json.Unmarshal(want, &exp)
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%T:\n got %s\nwant %s", params, req.BodyRaw, want)
		}
	}
}
