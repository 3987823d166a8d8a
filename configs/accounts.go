package configs

import (
	"maps"
	"reflect"
	"slices"
)

// DefaultAccount names the account of a platform block's own keys (channels.telegram.botToken)
// in bindings and status; its messages carry the account "" so that existing session keys,
// dedup ids and pairings stay as they were before accounts existed.
const DefaultAccount = "default"

// ChannelAccount is one bot account reef runs: the default account of a platform block, or
// one of its accounts.<name>, with the block's other keys inherited.
type ChannelAccount struct {
	Channel string // telegram | discord | feishu
	Account string // "" for the default account, else the key under accounts
	Path    string // the key path of its block: channels.telegram or channels.telegram.accounts.work

	Telegram *TelegramConfig // exactly one of these is set, by Channel
	Discord  *DiscordConfig
	Feishu   *FeishuConfig
	Slack    *SlackConfig
}

// Access returns the account's access settings with defaults.
func (a ChannelAccount) Access() AccessConfig {
	switch {
	case a.Telegram != nil:
		return a.Telegram.Access()
	case a.Discord != nil:
		return a.Discord.Access()
	case a.Feishu != nil:
		return a.Feishu.Access()
	case a.Slack != nil:
		return a.Slack.Access()
	}
	return AccessConfig{}
}

// Name is the account as users name it: "default" for the block's own keys.
func (a ChannelAccount) Name() string {
	if a.Account == "" {
		return DefaultAccount
	}
	return a.Account
}

// Accounts lists every bot account the platform blocks configure, by channel then account
// name (the default account first). A block runs its own keys as the default account unless
// it has accounts and no credential of its own. An account inherits every key of its block
// it does not set, except the credentials and webhook endpoints (see notInherited).
func (c *ChannelsConfig) Accounts() []ChannelAccount {
	var out []ChannelAccount
	if t := c.Telegram; t != nil {
		out = appendAccounts(out, "telegram", t, t.Accounts, t.BotToken != "",
			func(a ChannelAccount, cfg *TelegramConfig) ChannelAccount { a.Telegram = cfg; return a })
	}
	if d := c.Discord; d != nil {
		out = appendAccounts(out, "discord", d, d.Accounts, d.Token != "",
			func(a ChannelAccount, cfg *DiscordConfig) ChannelAccount { a.Discord = cfg; return a })
	}
	if f := c.Feishu; f != nil {
		out = appendAccounts(out, "feishu", f, f.Accounts, f.AppID != "" || f.AppSecret != "",
			func(a ChannelAccount, cfg *FeishuConfig) ChannelAccount { a.Feishu = cfg; return a })
	}
	if s := c.Slack; s != nil {
		out = appendAccounts(out, "slack", s, s.Accounts, s.BotToken != "",
			func(a ChannelAccount, cfg *SlackConfig) ChannelAccount { a.Slack = cfg; return a })
	}
	return out
}

func appendAccounts[T any](out []ChannelAccount, channel string, base *T, accounts map[string]*T, ownCredential bool,
	set func(ChannelAccount, *T) ChannelAccount) []ChannelAccount {
	if ownCredential || len(accounts) == 0 {
		own := *base
		clearAccounts(&own)
		out = append(out, set(ChannelAccount{Channel: channel, Path: "channels." + channel}, &own))
	}
	for _, name := range slices.Sorted(maps.Keys(accounts)) {
		acc := inherit(base, accounts[name])
		out = append(out, set(ChannelAccount{Channel: channel, Account: name,
			Path: joinMapKey("channels."+channel+".accounts", name)}, acc))
	}
	return out
}

// notInherited are the keys an account never takes from its block: each bot has its own
// credentials, and two bots cannot share one webhook endpoint.
var notInherited = map[string]bool{
	"botToken": true, "token": true, "appId": true, "appSecret": true,
	"webhookUrl": true, "webhookSecret": true, "verificationToken": true, "encryptKey": true,
	"webhookListen": true, "webhookPath": true, "accounts": true,
	"appToken": true, "signingSecret": true, "eventsListen": true, "eventsPath": true,
}

// inherit returns acc with the zero fields (other than notInherited) taken from base.
func inherit[T any](base, acc *T) *T {
	out := new(T)
	if acc != nil {
		*out = *acc
	}
	ov, bv := reflect.ValueOf(out).Elem(), reflect.ValueOf(base).Elem()
	for i := 0; i < ov.NumField(); i++ {
		name := yamlName(ov.Type().Field(i))
		if name == "" || notInherited[name] {
			continue
		}
		if f := ov.Field(i); f.IsZero() {
			f.Set(bv.Field(i))
		}
	}
	clearAccounts(out)
	return out
}

// clearAccounts empties the Accounts field of a platform block copy.
func clearAccounts[T any](cfg *T) {
	if f := reflect.ValueOf(cfg).Elem().FieldByName("Accounts"); f.IsValid() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// credential is what tells two accounts apart on the platform: the same value twice is the
// same bot run twice.
func (a ChannelAccount) credential() (key, value string) {
	switch {
	case a.Telegram != nil:
		return "botToken", a.Telegram.BotToken
	case a.Discord != nil:
		return "token", a.Discord.Token
	case a.Feishu != nil:
		return "appId", a.Feishu.AppID
	case a.Slack != nil:
		return "botToken", a.Slack.BotToken
	}
	return "", ""
}

// validateAccounts reports accounts with names that cannot be told apart from the default
// account, and two accounts that are the same bot.
func (c *Config) validateAccounts(v *validator) {
	seen := map[string]string{} // channel + credential → path
	for _, a := range c.Channels.Accounts() {
		if a.Account != "" {
			switch {
			case a.Account == DefaultAccount:
				v.addf("%s: %q names the account of channels.%s's own keys: choose another name", a.Path, a.Account, a.Channel)
			case !idPattern.MatchString(a.Account):
				v.addf("%s: account names use only a-z, 0-9, '_' and '-'", a.Path)
			}
		}
		key, val := a.credential()
		if val == "" {
			continue
		}
		id := a.Channel + "\x00" + val
		if first, dup := seen[id]; dup {
			v.addf("%s.%s: the same bot as %s: each account needs its own %s (one bot polled twice loses messages)", a.Path, key, first, key)
			continue
		}
		seen[id] = a.Path
	}
}
