package feishu_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// TestSecretsNeverLeak drives every path that logs or returns errors — refused credentials,
// failed sends, rate limits, a failed delivery, rejected webhooks — with canary secrets and
// the most verbose logging, then looks for the app secret, the encrypt key, the verification
// token and every tenant token in the logs and the errors.
func TestSecretsNeverLeak(t *testing.T) {
	const secret, key, vtoken = "canary-APPSECRET-7f3a91", "canary-ENCRYPTKEY-52be0c", "canary-VTOKEN-c4d1e8"
	logs := &syncBuffer{}
	log := zerolog.New(logs).Level(zerolog.TraceLevel)
	var errs []error

	// Refused credentials.
	srv := feishutest.New(t, feishutest.Config{AppSecret: "the-real-one"})
	cfg := srv.BotConfig()
	cfg.AppSecret = secret
	bad, err := feishu.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	errs = append(errs, bad.Run(context.Background(), newInbox().deliver))
	_, err = bad.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "hi"})
	errs = append(errs, err)

	// A working bot on the long connection whose sends fail in every way.
	srv = feishutest.New(t, feishutest.Config{AppSecret: secret})
	bot, err := feishu.New(srv.BotConfig(), log)
	if err != nil {
		t.Fatal(err)
	}
	box := newInbox()
	failed := false
	box.fail = func(messages.Inbound) error {
		if !failed {
			failed = true
			return context.DeadlineExceeded
		}
		return nil
	}
	run(t, bot, box)
	srv.UserSays("oc_dm", "ou_alice", "hello")
	box.next(t)
	for _, code := range []int{500, 230002, 99991400, 230001} {
		srv.FailNext("create", code)
		_, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "reply"})
		errs = append(errs, err)
	}
	errs = append(errs, bot.Edit(context.Background(), "oc_dm", "om_unknown", "x"))

	// Webhook callbacks that are refused.
	hsrv := feishutest.New(t, feishutest.Config{AppSecret: secret, VerificationToken: vtoken})
	hcfg := hsrv.BotConfig()
	hcfg.Mode, hcfg.WebhookListen, hcfg.EncryptKey, hcfg.VerificationToken = feishu.ModeWebhook, "127.0.0.1:0", key, vtoken
	hbot, err := feishu.New(hcfg, log)
	if err != nil {
		t.Fatal(err)
	}
	run(t, hbot, newInbox())
	eventually(t, func() bool { return hbot.WebhookURL() != "" })
	payload, _, _ := hsrv.Event(feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "x"})
	hook := &feishutest.Webhook{EncryptKey: key}
	for _, opt := range []feishutest.PostOptions{{BadSignature: true}, {Plain: true}, {}} {
		post(t, hook, hbot.WebhookURL(), payload, opt)
	}

	canaries := append([]string{secret, key, vtoken}, srv.Tokens()...)
	canaries = append(canaries, hsrv.Tokens()...)
	if len(srv.Tokens()) == 0 {
		t.Fatal("the fake handed out no token: the test exercised nothing")
	}
	out := logs.String()
	if !strings.Contains(out, "lark-sdk") && !strings.Contains(out, "delivery failed") {
		t.Fatalf("no log output captured: the test exercised nothing")
	}
	for _, c := range canaries {
		if strings.Contains(out, c) {
			t.Errorf("a log line contains the secret %q", c)
		}
		for _, err := range errs {
			if err != nil && strings.Contains(err.Error(), c) {
				t.Errorf("error %q contains the secret %q", err, c)
			}
		}
	}
}
