package configs

import (
	"net/url"
	"slices"
)

var dmPolicies = []string{"pairing", "allowlist", "open", "disabled"}

// validateChannels checks each configured platform block.
func (c *Config) validateChannels(v *validator) {
	if t := c.Channels.Telegram; t != nil {
		if t.BotToken == "" {
			v.addf("channels.telegram.botToken: empty: set TELEGRAM_BOT_TOKEN to the token @BotFather gave you")
		}
		v.oneOf("channels.telegram.mode", t.Mode, []string{"polling", "webhook"})
		if t.Mode == "webhook" && (t.WebhookURL == "" || t.WebhookSecret == "") {
			v.addf("channels.telegram: webhook mode needs webhookUrl (your public https URL) and webhookSecret (any long random string)")
		}
		validateURL(v, "channels.telegram.apiRoot", t.APIRoot)
		validateAccess(v, "channels.telegram", t.Access())
	}
	if d := c.Channels.Discord; d != nil {
		if d.Token == "" {
			v.addf("channels.discord.token: empty: set DISCORD_BOT_TOKEN to your bot's token (Developer Portal → Bot → Reset Token)")
		}
		validateURL(v, "channels.discord.apiBase", d.APIBase)
		validateAccess(v, "channels.discord", d.Access())
	}
	if f := c.Channels.Feishu; f != nil {
		if f.AppID == "" || f.AppSecret == "" {
			v.addf("channels.feishu: appId and appSecret are required: set FEISHU_APP_ID and FEISHU_APP_SECRET from your app's credentials page")
		}
		if f.Domain != "feishu" && f.Domain != "lark" {
			validateURL(v, "channels.feishu.domain", f.Domain)
		}
		v.oneOf("channels.feishu.mode", f.Mode, []string{"websocket", "webhook"})
		if f.Mode == "webhook" && f.VerificationToken == "" && f.EncryptKey == "" {
			v.addf("channels.feishu: webhook mode needs verificationToken or encryptKey (from the app's Events & Callbacks page) so forged events are refused")
		}
		validateAccess(v, "channels.feishu", f.Access())
	}
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
