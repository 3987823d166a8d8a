package feishutest

import (
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/channeltest"
	"github.com/reefgw/reef/channels/feishu"
)

// Platform adapts a Server to channeltest.Platform.
type Platform struct{ *Server }

var _ channeltest.Platform = Platform{}

// UserSays queues a direct message (chatID is the p2p chat, senderID the sender's open_id).
func (p Platform) UserSays(t *testing.T, chatID, senderID, text string) {
	t.Helper()
	p.Server.UserSays(chatID, senderID, text)
}

// Limit is the bot's message limit, in runes.
func (p Platform) Limit() (int, channels.Measure) { return feishu.Limit, channels.Runes }

// Redelivers is true: unacknowledged events are sent again, by WebSocket and by webhook.
func (p Platform) Redelivers() bool { return true }

// BotConfig returns a bot config pointing at the fake, with its app id and secret.
func (s *Server) BotConfig() feishu.Config {
	return feishu.Config{AppID: s.AppID, AppSecret: s.AppSecret, Domain: s.URL}
}

// WebSocketSetup is a channeltest.Setup: a fresh fake and a bot on its long connection.
func WebSocketSetup(t *testing.T) (channels.Channel, channeltest.Platform) {
	srv := New(t, Config{})
	bot, err := feishu.New(srv.BotConfig(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return bot, Platform{srv}
}

// WebhookSetup is a channeltest.Setup: a fresh fake posting encrypted, signed callbacks to a
// bot in webhook mode on 127.0.0.1.
func WebhookSetup(t *testing.T) (channels.Channel, channeltest.Platform) {
	srv := New(t, Config{VerificationToken: "vtoken-" + randHex(4)})
	cfg := srv.BotConfig()
	cfg.Mode = feishu.ModeWebhook
	cfg.WebhookListen = "127.0.0.1:0"
	cfg.VerificationToken = srv.VerificationToken
	cfg.EncryptKey = "ekey-" + randHex(8)
	bot, err := feishu.New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	srv.UseWebhook(bot.WebhookURL, cfg.EncryptKey)
	return bot, Platform{srv}
}
