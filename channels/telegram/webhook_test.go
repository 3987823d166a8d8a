package telegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mymmrac/telego"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

const testSecret = "s3cret_Token-1"

func webhookConfig(c *Config) {
	c.Mode = ModeWebhook
	c.WebhookURL = "https://reef.example.com/telegram"
	c.WebhookSecret = testSecret
	c.WebhookListen = "127.0.0.1:0"
}

func TestWebhookConfigRefused(t *testing.T) {
	tests := map[string]func(*Config){
		"no secret":     func(c *Config) { c.WebhookSecret = "" },
		"bad secret":    func(c *Config) { c.WebhookSecret = "has spaces" },
		"no url":        func(c *Config) { c.WebhookURL = "" },
		"http url":      func(c *Config) { c.WebhookURL = "http://reef.example.com/hook" },
		"no listen":     func(c *Config) { c.WebhookListen = "" },
		"unknown mode":  func(c *Config) { c.Mode = "push" },
		"bad token":     func(c *Config) { c.Token = "123:short" },
		"bad api root":  func(c *Config) { c.APIRoot = "ftp://x" },
		"missing token": func(c *Config) { c.Token = "" },
		"client timeout below the poll timeout": func(c *Config) {
			c.Mode, c.HTTPClient = ModePolling, &http.Client{Timeout: time.Second}
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := Config{Token: telegramtest.Token}
			webhookConfig(&cfg)
			change(&cfg)
			_, err := New(cfg, zerolog.Nop())
			if err == nil || !strings.HasPrefix(err.Error(), "telegram: ") {
				t.Errorf("New = %v, want a telegram: error", err)
			}
			if err != nil && strings.Contains(err.Error(), telegramtest.Token) {
				t.Errorf("error %q contains the token", err)
			}
		})
	}
}

func TestWebhook(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, webhookConfig)
	box := newInbox()
	refuse := make(chan bool, 1)
	box.fail = func(messages.Inbound) error {
		select {
		case <-refuse:
			return errors.New("storage unavailable")
		default:
			return nil
		}
	}
	run(t, b, box.deliver)
	var addr string
	select {
	case addr = <-b.webhookAddr:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook server did not start")
	}
	eventually(t, "the webhook is registered", func() bool { u, _ := s.Webhook(); return u != "" })
	if u, secret := s.Webhook(); u != "https://reef.example.com/telegram" || secret != testSecret {
		t.Errorf("setWebhook(%q, %q), want the configured URL and secret", u, secret)
	}
	if s.Calls("getUpdates") != 0 || s.Calls("deleteWebhook") != 0 {
		t.Error("webhook mode polled or deleted the webhook")
	}

	update := func(text string) []byte {
		body, _ := json.Marshal(telego.Update{UpdateID: 1, Message: s.Message(5, telego.ChatTypePrivate, 5, text)})
		return body
	}
	post := func(secret string, body []byte) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/telegram", bytes.NewReader(body))
		if secret != "" {
			req.Header.Set(SecretHeader, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("", update("no secret")); code != http.StatusUnauthorized {
		t.Errorf("without the secret header: %d, want 401", code)
	}
	if code := post("wrong", update("wrong secret")); code != http.StatusUnauthorized {
		t.Errorf("with a wrong secret: %d, want 401", code)
	}
	if code := post(testSecret, append(update("huge"), bytes.Repeat([]byte(" "), MaxWebhookBody)...)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", code)
	}
	if code := post(testSecret, []byte("{not json")); code != http.StatusBadRequest {
		t.Errorf("malformed body: %d, want 400", code)
	}
	refuse <- true
	if code := post(testSecret, update("refused")); code == http.StatusOK {
		t.Error("answered 200 although deliver refused the update")
	}
	if code := post(testSecret, update("hello")); code != http.StatusOK {
		t.Errorf("with the secret: %d, want 200", code)
	}
	if got := box.next(t); got.Text != "hello" || got.ChatType != messages.ChatDirect {
		t.Errorf("delivered %+v, want the direct message", got)
	}
	resp, err := http.Get("http://" + addr + "/telegram")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d, want 405", resp.StatusCode)
	}
	box.mu.Lock()
	defer box.mu.Unlock()
	if len(box.got) != 1 {
		t.Errorf("delivered %d messages, want only the one with the right secret", len(box.got))
	}
}
