package feishu_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// hookBot starts a fake and a bot in webhook mode with the given token and key; events are
// posted by the test through the returned driver.
func hookBot(t *testing.T, token, key string) (*feishutest.Server, *inbox, *feishutest.Webhook, string) {
	t.Helper()
	srv := feishutest.New(t, feishutest.Config{VerificationToken: token})
	cfg := srv.BotConfig()
	cfg.Mode, cfg.WebhookListen, cfg.VerificationToken, cfg.EncryptKey = feishu.ModeWebhook, "127.0.0.1:0", token, key
	bot, err := feishu.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	box := newInbox()
	run(t, bot, box)
	eventually(t, func() bool { return bot.WebhookURL() != "" })
	return srv, box, &feishutest.Webhook{EncryptKey: key}, bot.WebhookURL()
}

func post(t *testing.T, hook *feishutest.Webhook, url string, payload []byte, opt feishutest.PostOptions) (int, string) {
	t.Helper()
	status, body, err := hook.Post(context.Background(), url, payload, opt)
	if err != nil {
		t.Fatal(err)
	}
	return status, string(body)
}

func TestWebhookEncryptedAndSigned(t *testing.T) {
	srv, box, hook, url := hookBot(t, "vt-1", "ek-1")
	payload, _, mid := srv.Event(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "secret plans"})
	if status, body := post(t, hook, url, payload, feishutest.PostOptions{}); status != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", status, body)
	}
	if got := box.next(t); got.Text != "secret plans" || got.MessageID != mid {
		t.Errorf("delivered %+v, want the decrypted message %s", got, mid)
	}
}

func TestWebhookRefusesUnauthenticated(t *testing.T) {
	srv, box, hook, url := hookBot(t, "vt-2", "ek-2")
	payload, _, _ := srv.Event(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_mallory", Text: "let me in"})
	wrongToken := []byte(strings.Replace(string(payload), `"token":"vt-2"`, `"token":"guess"`, 1))
	tests := []struct {
		name    string
		payload []byte
		opt     feishutest.PostOptions
		want    int
	}{
		{"bad signature", payload, feishutest.PostOptions{BadSignature: true}, http.StatusUnauthorized},
		{"no signature", payload, feishutest.PostOptions{NoSignature: true}, http.StatusUnauthorized},
		{"wrong verification token", wrongToken, feishutest.PostOptions{}, http.StatusUnauthorized},
		{"not encrypted", payload, feishutest.PostOptions{Plain: true}, http.StatusBadRequest},
		{"garbage", []byte("{not json"), feishutest.PostOptions{Plain: true}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		if status, _ := post(t, hook, url, tt.payload, tt.opt); status != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, status, tt.want)
		}
	}
	select {
	case in := <-box.ch:
		t.Errorf("delivered %+v from an unauthenticated callback", in)
	default:
	}
}

func TestWebhookTokenOnly(t *testing.T) {
	srv, box, hook, url := hookBot(t, "vt-3", "")
	payload, _, _ := srv.Event(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "plain"})
	missing := []byte(strings.Replace(string(payload), `"token":"vt-3"`, `"token":""`, 1))
	if status, _ := post(t, hook, url, missing, feishutest.PostOptions{}); status != http.StatusUnauthorized {
		t.Errorf("missing token: status %d, want 401", status)
	}
	if status, _ := post(t, hook, url, payload, feishutest.PostOptions{}); status != http.StatusOK {
		t.Errorf("right token: status %d, want 200", status)
	}
	if got := box.next(t).Text; got != "plain" {
		t.Errorf("delivered %q, want %q", got, "plain")
	}
}

func TestWebhookNeedsASecret(t *testing.T) {
	_, err := feishu.New(feishu.Config{AppID: "cli_x", AppSecret: "s", Mode: feishu.ModeWebhook, WebhookListen: "127.0.0.1:0"}, zerolog.Nop())
	if err == nil || !strings.HasPrefix(err.Error(), "feishu: ") {
		t.Errorf("New in webhook mode without token or key = %v, want a feishu: error", err)
	}
}

func TestWebhookChallenge(t *testing.T) {
	for _, key := range []string{"", "ek-4"} {
		_, _, hook, url := hookBot(t, "vt-4", key)
		status, body := post(t, hook, url, feishutest.ChallengePayload("vt-4", "c-123"), feishutest.PostOptions{NoSignature: true})
		var got struct{ Challenge string }
		_ = json.Unmarshal([]byte(body), &got)
		if status != http.StatusOK || got.Challenge != "c-123" {
			t.Errorf("key %q: challenge answered %d %s, want 200 with the challenge", key, status, body)
		}
		if status, _ := post(t, hook, url, feishutest.ChallengePayload("guess", "c-1"), feishutest.PostOptions{NoSignature: true}); status != http.StatusUnauthorized {
			t.Errorf("key %q: challenge with a wrong token answered %d, want 401", key, status)
		}
	}
}

func TestWebhookSlowDeliveryAnswers500(t *testing.T) {
	srv, box, hook, url := hookBot(t, "vt-5", "ek-5")
	release := make(chan struct{})
	defer close(release)
	box.fail = func(messages.Inbound) error { <-release; return errors.New("too late") }
	payload, _, _ := srv.Event(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "slow"})
	start := time.Now()
	status, _ := post(t, hook, url, payload, feishutest.PostOptions{})
	if took := time.Since(start); status != http.StatusInternalServerError || took >= 3*time.Second {
		t.Errorf("slow delivery answered %d after %v, want 500 within 3 s", status, took)
	}
}

func TestWebhookBodyCap(t *testing.T) {
	_, box, hook, url := hookBot(t, "vt-6", "")
	big := []byte(`{"token":"vt-6","pad":"` + strings.Repeat("x", feishu.MaxWebhookBody) + `"}`)
	if status, _ := post(t, hook, url, big, feishutest.PostOptions{}); status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body answered %d, want 413", status)
	}
	select {
	case in := <-box.ch:
		t.Errorf("delivered %+v", in)
	default:
	}
}
