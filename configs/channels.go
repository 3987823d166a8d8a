package configs

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

var dmPolicies = []string{"pairing", "allowlist", "open", "disabled"}

// validateChannels checks each configured bot account (a platform block's own keys and its
// accounts.<name>), then that accounts are distinct bots.
func (c *Config) validateChannels(v *validator) {
	for _, a := range c.Channels.Accounts() {
		switch {
		case a.Telegram != nil:
			validateTelegram(v, a.Path, a.Account != "", a.Telegram)
		case a.Discord != nil:
			validateDiscord(v, a.Path, a.Discord)
		case a.Feishu != nil:
			validateFeishu(v, a.Path, a.Account != "", a.Feishu)
		case a.Slack != nil:
			validateSlack(v, a.Path, c.Gateway.HTTP.Off(), a.Slack)
		}
	}
	c.validateAccounts(v)
}

func validateTelegram(v *validator, path string, named bool, t *TelegramConfig) {
	if t.BotToken == "" {
		v.addf("%s.botToken: empty: set TELEGRAM_BOT_TOKEN to the token @BotFather gave you", path)
	}
	v.oneOf(path+".mode", t.Mode, []string{"polling", "webhook"})
	if t.Mode == "webhook" && (t.WebhookURL == "" || t.WebhookSecret == "") {
		v.addf("%s: webhook mode needs webhookUrl (your public https URL) and webhookSecret (any long random string)", path)
	}
	if named && t.Mode == "webhook" && t.WebhookListen == "" {
		v.addf("%s.webhookListen: an account in webhook mode needs its own local address (two bots cannot share one)", path)
	}
	validateURL(v, path+".apiRoot", t.APIRoot)
	validateAccess(v, path, t.Access())
	validateStreaming(v, path, t.Streaming)
}

// ShardCount is Shards as a number: 0 for auto.
func (d *DiscordConfig) ShardCount() (int, error) {
	switch s := strings.TrimSpace(d.Shards); s {
	case "", "auto":
		return 0, nil
	default:
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxDiscordShards {
			return 0, fmt.Errorf("%q is not auto or a number of shards from 1 to %d", d.Shards, maxDiscordShards)
		}
		return n, nil
	}
}

// maxDiscordShards bounds a fixed shard count (Discord's largest bots run a few thousand).
const maxDiscordShards = 65536

func validateDiscord(v *validator, path string, d *DiscordConfig) {
	if d.Token == "" {
		v.addf("%s.token: empty: set DISCORD_BOT_TOKEN to your bot's token (Developer Portal → Bot → Reset Token)", path)
	}
	validateURL(v, path+".apiBase", d.APIBase)
	if _, err := d.ShardCount(); err != nil {
		v.addf("%s.shards: %v", path, err)
	}
	validateAccess(v, path, d.Access())
	validateStreaming(v, path, d.Streaming)
}

func validateFeishu(v *validator, path string, named bool, f *FeishuConfig) {
	if f.AppID == "" || f.AppSecret == "" {
		v.addf("%s: appId and appSecret are required: set FEISHU_APP_ID and FEISHU_APP_SECRET from your app's credentials page", path)
	}
	if f.Domain != "feishu" && f.Domain != "lark" {
		validateURL(v, path+".domain", f.Domain)
	}
	v.oneOf(path+".mode", f.Mode, []string{"websocket", "webhook"})
	if f.Mode == "webhook" && f.VerificationToken == "" && f.EncryptKey == "" {
		v.addf("%s: webhook mode needs verificationToken or encryptKey (from the app's Events & Callbacks page) so forged events are refused", path)
	}
	if named && f.Mode == "webhook" && f.WebhookListen == "" {
		v.addf("%s.webhookListen: an account in webhook mode needs its own local address (two apps cannot share one)", path)
	}
	validateAccess(v, path, f.Access())
	validateStreaming(v, path, f.Streaming)
}

func validateSlack(v *validator, path string, webOff bool, s *SlackConfig) {
	if !strings.HasPrefix(s.BotToken, "xoxb-") {
		v.addf("%s.botToken: set SLACK_BOT_TOKEN to the app's Bot User OAuth Token (xoxb-…, OAuth & Permissions)", path)
	}
	v.oneOf(path+".mode", s.Mode, []string{"socket", "events"})
	switch s.Mode {
	case "socket", "":
		if !strings.HasPrefix(s.AppToken, "xapp-") {
			v.addf("%s.appToken: Socket Mode needs an app-level token (xapp-…): set SLACK_APP_TOKEN (Basic Information → App-Level Tokens, scope connections:write)", path)
		}
	case "events":
		if s.SigningSecret == "" {
			v.addf("%s.signingSecret: events mode needs the app's signing secret (Basic Information → App Credentials) so forged events are refused", path)
		}
		if s.EventsListen == "" && webOff {
			v.addf("%s.eventsListen: events come to reef's web listener, which gateway.http turns off: set eventsListen (e.g. 127.0.0.1:3000) or turn the listener on", path)
		}
	}
	validateURL(v, path+".apiUrl", s.APIURL)
	validateAccess(v, path, s.Access())
	validateStreaming(v, path, s.Streaming)
}

func validateAccess(v *validator, path string, a AccessConfig) {
	v.oneOf(path+".dmPolicy", a.DMPolicy, dmPolicies)
	if a.DMPolicy == "open" && !slices.Contains(a.AllowFrom, "*") {
		v.addf(`%s.dmPolicy: open lets anyone use the bot and its tools: confirm it with allowFrom: ["*"], or use pairing`, path)
	}
}

func validateURL(v *validator, path, raw string) {
	if raw == "" {
		return
	}
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.addf("%s: %q is not an http(s) URL", path, raw)
	}
}
