package openclaw

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// channelBlock is the part of a Telegram, Discord or Feishu block the importer reads (the
// three share access keys).
type channelBlock struct {
	Enabled           *bool                      `json:"enabled"`
	BotToken          json.RawMessage            `json:"botToken"`
	TokenFile         string                     `json:"tokenFile"`
	Token             json.RawMessage            `json:"token"`
	AppID             string                     `json:"appId"`
	AppSecret         json.RawMessage            `json:"appSecret"`
	Domain            string                     `json:"domain"`
	ConnectionMode    string                     `json:"connectionMode"`
	VerificationToken json.RawMessage            `json:"verificationToken"`
	EncryptKey        json.RawMessage            `json:"encryptKey"`
	WebhookPath       string                     `json:"webhookPath"`
	WebhookHost       string                     `json:"webhookHost"`
	WebhookPort       int                        `json:"webhookPort"`
	WebhookURL        string                     `json:"webhookUrl"`
	WebhookSecret     json.RawMessage            `json:"webhookSecret"`
	DMPolicy          string                     `json:"dmPolicy"`
	DM                *struct{ Policy string }   `json:"dm"`
	AllowFrom         []json.RawMessage          `json:"allowFrom"`
	GroupPolicy       string                     `json:"groupPolicy"`
	GroupAllowFrom    []json.RawMessage          `json:"groupAllowFrom"`
	Groups            json.RawMessage            `json:"groups"`
	Guilds            map[string]discordGuild    `json:"guilds"`
	RequireMention    *bool                      `json:"requireMention"`
	Accounts          map[string]json.RawMessage `json:"accounts"`
	// Slack (slack.go)
	AppToken      json.RawMessage `json:"appToken"`
	SigningSecret json.RawMessage `json:"signingSecret"`
	Mode          string          `json:"mode"`
	Channels      json.RawMessage `json:"channels"`
}

type discordGuild struct {
	RequireMention *bool `json:"requireMention"`
	Channels       map[string]struct {
		Allow          *bool `json:"allow"`
		RequireMention *bool `json:"requireMention"`
	} `json:"channels"`
}

// channels maps Telegram, Discord and Feishu; other platforms are reported.
func (m *mapper) channels() {
	out := &outChannels{}
	for _, name := range sortedKeys(m.in.Config.Channels) {
		raw := m.in.Config.Channels[name]
		var b channelBlock
		if name == "defaults" || name == "modelByChannel" {
			m.skip("channels."+name, "no reef equivalent")
			continue
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			m.skip("channels."+name, "not readable: %v", err)
			continue
		}
		if b.Enabled != nil && !*b.Enabled {
			m.skip("channels."+name, "disabled in OpenClaw (enabled: false)")
			continue
		}
		m.channelKeys("channels."+name, raw)
		switch name {
		case "telegram":
			out.Telegram = m.telegram("channels.telegram", "", b, true)
		case "discord":
			out.Discord = m.discord("channels.discord", "", b, true)
		case "feishu", "lark":
			out.Feishu = m.feishu("channels."+name, "", b, true)
		case "slack":
			out.Slack = m.slack("channels.slack", "", b, true)
		default:
			m.skip("channels."+name, "reef has no %s channel (it has Telegram, Discord, Feishu/Lark and Slack)", name)
		}
	}
	if *out != (outChannels{}) {
		m.out.Channels = out
	}
}

var accountName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// accounts maps a block's accounts with fn; "default" becomes the block's own keys.
func accounts[T any](m *mapper, path string, b channelBlock, fn func(path, account string, b channelBlock, top bool) *T) (def *T, named map[string]*T) {
	for _, name := range sortedKeys(b.Accounts) {
		var ab channelBlock
		if err := json.Unmarshal(b.Accounts[name], &ab); err != nil {
			m.skip(path+".accounts."+name, "not readable: %v", err)
			continue
		}
		if ab.Enabled != nil && !*ab.Enabled {
			m.skip(path+".accounts."+name, "disabled in OpenClaw (enabled: false)")
			continue
		}
		if name == "default" {
			def = fn(path+".accounts.default", "", ab, false)
			continue
		}
		id := strings.ToLower(name)
		if !accountName.MatchString(id) {
			m.skip(path+".accounts."+name, "reef account names use a-z, 0-9, '_' and '-'")
			continue
		}
		if named == nil {
			named = map[string]*T{}
		}
		named[id] = fn(path+".accounts."+name, id, ab, false)
	}
	return def, named
}

// envFor names the variable of a secret: TELEGRAM_BOT_TOKEN, TELEGRAM_WORK_BOT_TOKEN.
func envFor(platform, account, key string) string {
	if account == "" {
		return platform + "_" + key
	}
	return platform + "_" + strings.ToUpper(strings.ReplaceAll(account, "-", "_")) + "_" + key
}

func (m *mapper) telegram(path, account string, b channelBlock, top bool) *outTelegram {
	t := &outTelegram{}
	hasToken := len(b.BotToken) > 0 || b.TokenFile != ""
	if b.TokenFile != "" {
		m.skip(path+".tokenFile", "reef reads the token from the environment: put the file's content in %s", envFor("TELEGRAM", account, "BOT_TOKEN"))
	}
	if hasToken || (top && len(b.Accounts) == 0) {
		t.BotToken = m.secret(b.BotToken, envFor("TELEGRAM", account, "BOT_TOKEN"), path+".botToken", true)
	}
	if b.WebhookURL != "" {
		t.Mode, t.WebhookURL = "webhook", b.WebhookURL
		t.WebhookSecret = m.secret(b.WebhookSecret, envFor("TELEGRAM", account, "WEBHOOK_SECRET"), path+".webhookSecret", false)
		m.skip(path+".webhookPath", "reef serves the webhook on webhookListen (default 127.0.0.1:8443); point your proxy there")
	}
	t.outAccess = m.access(path, "telegram", b, top)
	if top {
		def, named := accounts(m, path, b, m.telegram)
		if def != nil {
			mergeTelegram(t, def)
		}
		t.Accounts = named
	}
	m.importedChannel(path, top, t.outAccess)
	return t
}

func mergeTelegram(t, def *outTelegram) {
	if def.BotToken != "" {
		t.BotToken = def.BotToken
	}
	if def.Mode != "" {
		t.Mode, t.WebhookURL, t.WebhookSecret = def.Mode, def.WebhookURL, def.WebhookSecret
	}
	t.outAccess = mergeAccess(t.outAccess, def.outAccess)
}

func (m *mapper) discord(path, account string, b channelBlock, top bool) *outDiscord {
	d := &outDiscord{}
	if len(b.Token) > 0 || (top && len(b.Accounts) == 0) {
		d.Token = m.secret(b.Token, envFor("DISCORD", account, "BOT_TOKEN"), path+".token", true)
	}
	d.outAccess = m.access(path, "discord", b, top)
	for _, gid := range sortedKeys(b.Guilds) {
		g := b.Guilds[gid]
		if len(g.Channels) == 0 {
			m.skip(path+".guilds."+gid, "reef allows Discord channels by id, not whole guilds: list the channel ids under groups")
			continue
		}
		for _, cid := range sortedKeys(g.Channels) {
			c := g.Channels[cid]
			switch {
			case c.Allow != nil && !*c.Allow:
			case digits(cid):
				d.Groups = append(d.Groups, cid)
			default:
				m.skip(path+".guilds."+gid+".channels."+cid, "reef allows Discord channels by id, not by name: add the channel's id under groups")
			}
		}
		if g.RequireMention != nil && d.RequireMention == nil {
			d.RequireMention = g.RequireMention
		}
	}
	d.Groups = dedupe(d.Groups)
	if top {
		def, named := accounts(m, path, b, m.discord)
		if def != nil {
			if def.Token != "" {
				d.Token = def.Token
			}
			d.outAccess = mergeAccess(d.outAccess, def.outAccess)
		}
		d.Accounts = named
	}
	m.importedChannel(path, top, d.outAccess)
	return d
}

func (m *mapper) feishu(path, account string, b channelBlock, top bool) *outFeishu {
	f := &outFeishu{AppID: b.AppID, Domain: b.Domain, WebhookPath: b.WebhookPath}
	if b.AppID != "" || (top && len(b.Accounts) == 0) {
		if f.AppID == "" || strings.HasPrefix(f.AppID, "${") {
			f.AppID = orDefault(f.AppID, "${"+envFor("FEISHU", account, "APP_ID")+"}")
			m.needEnv(strings.Trim(f.AppID, "${}"), path+".appId")
		}
		f.AppSecret = m.secret(b.AppSecret, envFor("FEISHU", account, "APP_SECRET"), path+".appSecret", true)
	}
	if b.ConnectionMode == "webhook" {
		f.Mode = "webhook"
		f.VerificationToken = m.secret(b.VerificationToken, envFor("FEISHU", account, "VERIFICATION_TOKEN"), path+".verificationToken", false)
		f.EncryptKey = m.secret(b.EncryptKey, envFor("FEISHU", account, "ENCRYPT_KEY"), path+".encryptKey", false)
		if b.WebhookPort > 0 {
			f.WebhookListen = fmt.Sprintf("%s:%d", orDefault(b.WebhookHost, "127.0.0.1"), b.WebhookPort)
		}
	}
	f.outAccess = m.access(path, "feishu", b, top)
	if top {
		def, named := accounts(m, path, b, m.feishu)
		if def != nil {
			f.AppID, f.AppSecret = orDefault(def.AppID, f.AppID), orDefault(def.AppSecret, f.AppSecret)
			f.outAccess = mergeAccess(f.outAccess, def.outAccess)
		}
		f.Accounts = named
	}
	m.importedChannel(path, top, f.outAccess)
	return f
}

// idPrefixes are the platform prefixes OpenClaw allows in allowFrom entries.
var idPrefixes = map[string][]string{
	"telegram": {"telegram:", "tg:"},
	"discord":  {"discord:", "user:", "<@"},
	"feishu":   {"feishu:", "lark:", "user:"},
	"slack":    {"slack:", "user:", "<@"},
}

// access maps dmPolicy, allowFrom, groups, groupPolicy and requireMention. An account
// (top false) inherits what it does not set from its block, as in reef.
func (m *mapper) access(path, platform string, b channelBlock, top bool) outAccess {
	a := outAccess{DMPolicy: b.DMPolicy, RequireMention: b.RequireMention}
	if a.DMPolicy == "" && b.DM != nil {
		a.DMPolicy = b.DM.Policy
	}
	switch a.DMPolicy {
	case "", "pairing", "allowlist", "open", "disabled":
	default:
		m.skip(path+".dmPolicy "+a.DMPolicy, "reef knows pairing, allowlist, open and disabled; left at pairing")
		a.DMPolicy = ""
	}
	a.AllowFrom = m.platformIDs(path+".allowFrom", platform, b.AllowFrom)
	if a.DMPolicy == "open" && !contains(a.AllowFrom, "*") {
		a.AllowFrom = append(a.AllowFrom, "*")
	}
	groups, mention := m.groups(path, b.Groups)
	if a.RequireMention == nil {
		a.RequireMention = mention
	}
	policy := b.GroupPolicy
	if policy == "" && platform == "feishu" && top {
		policy = "open" // Feishu's default in OpenClaw
	}
	switch policy {
	case "open":
		groups = append([]string{"*"}, groups...)
	case "disabled":
		groups = nil
	}
	if platform == "feishu" {
		groups = append(groups, m.platformIDs(path+".groupAllowFrom", platform, b.GroupAllowFrom)...)
	} else if len(b.GroupAllowFrom) > 0 {
		m.skip(path+".groupAllowFrom", "reef has no per-sender allowlist in groups: everyone in an allowed group may mention the bot")
	}
	a.Groups = dedupe(groups)
	if contains(a.Groups, "*") {
		a.Groups = []string{"*"}
	}
	return a
}

// platformIDs reads a list of platform ids: numbers or strings, with OpenClaw's prefixes removed.
func (m *mapper) platformIDs(path, platform string, raw []json.RawMessage) []string {
	var out []string
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) != nil {
			s = strings.TrimSpace(string(r)) // a number
		}
		for _, p := range idPrefixes[platform] {
			s = strings.TrimPrefix(s, p)
		}
		s = strings.TrimSuffix(s, ">")
		switch {
		case s == "":
		case strings.HasPrefix(s, "@") || (platform == "telegram" && s != "*" && !digits(strings.TrimPrefix(s, "-"))):
			m.skip(path+" "+s, "reef matches stable user ids, not names: add the numeric id instead")
		default:
			out = append(out, s)
		}
	}
	return dedupe(out)
}

// groups reads OpenClaw's groups: a list of ids, or a map by id ("*" for all) whose entries
// may set requireMention. The mention setting returned is "*"'s, else the one all agree on.
func (m *mapper) groups(path string, raw json.RawMessage) ([]string, *bool) {
	if len(raw) == 0 {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var byID map[string]struct {
		RequireMention *bool           `json:"requireMention"`
		Allow          *bool           `json:"allow"`
		SystemPrompt   string          `json:"systemPrompt"`
		Skills         json.RawMessage `json:"skills"`
		Topics         json.RawMessage `json:"topics"`
	}
	if err := json.Unmarshal(raw, &byID); err != nil {
		m.skip(path+".groups", "not readable: %v", err)
		return nil, nil
	}
	var ids []string
	var mention *bool
	agree := true
	for _, id := range sortedKeys(byID) {
		g := byID[id]
		if g.Allow != nil && !*g.Allow {
			continue
		}
		if id != "*" {
			ids = append(ids, id)
		}
		if g.SystemPrompt != "" || len(g.Skills) > 0 || len(g.Topics) > 0 {
			m.skip(path+".groups."+id, "per-group systemPrompt, skills and topics have no reef equivalent")
		}
		switch {
		case g.RequireMention == nil:
		case id == "*":
			mention, agree = g.RequireMention, false
		case agree && mention != nil && *mention != *g.RequireMention:
			m.skip(path+".groups."+id+".requireMention", "reef has one requireMention per channel; kept the first group's")
			agree = false
		case agree && mention == nil:
			mention = g.RequireMention
		}
	}
	if _, all := byID["*"]; all {
		ids = append([]string{"*"}, ids...)
	}
	return ids, mention
}

func mergeAccess(a, def outAccess) outAccess {
	if def.DMPolicy != "" {
		a.DMPolicy = def.DMPolicy
	}
	a.AllowFrom = dedupe(append(a.AllowFrom, def.AllowFrom...))
	a.Groups = dedupe(append(a.Groups, def.Groups...))
	if def.RequireMention != nil {
		a.RequireMention = def.RequireMention
	}
	return a
}

func accessSummary(a outAccess) string {
	s := ": dmPolicy " + orDefault(a.DMPolicy, "pairing")
	n := len(a.AllowFrom)
	if contains(a.AllowFrom, "*") {
		n--
		s += ", anyone may write (allowFrom \"*\")"
	}
	if n > 0 {
		s += fmt.Sprintf(", %d allowed sender(s)", n)
	}
	if n := len(a.Groups); n > 0 {
		s += fmt.Sprintf(", groups %s", strings.Join(a.Groups, " "))
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// channelKeys are the keys of a platform block the importer reads.
var channelKeys = map[string]bool{"enabled": true, "botToken": true, "tokenFile": true, "token": true, "appId": true,
	"appSecret": true, "domain": true, "connectionMode": true, "verificationToken": true, "encryptKey": true,
	"webhookPath": true, "webhookHost": true, "webhookPort": true, "webhookUrl": true, "webhookSecret": true,
	"dmPolicy": true, "dm": true, "allowFrom": true, "groupPolicy": true, "groupAllowFrom": true, "groups": true,
	"guilds": true, "requireMention": true, "accounts": true, "name": true, "botName": true, "defaultAccount": true,
	"appToken": true, "signingSecret": true, "mode": true, "channels": true}

// channelKeys reports the keys of a Telegram, Discord or Feishu block that have no reef
// equivalent (streaming, chunk limits, actions...).
func (m *mapper) channelKeys(path string, raw json.RawMessage) {
	switch path {
	case "channels.telegram", "channels.discord", "channels.feishu", "channels.lark", "channels.slack":
	default:
		return
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return
	}
	var other []string
	for _, k := range sortedKeys(keys) {
		if !channelKeys[k] {
			other = append(other, k)
		}
	}
	if len(other) > 0 {
		m.skip(path+": "+strings.Join(other, ", "), "no reef equivalent (reef's own settings apply: docs/channels.md)")
	}
}

func (m *mapper) importedChannel(path string, top bool, a outAccess) {
	if !top {
		m.imported("%s: an account (its other keys come from the block)", path)
		return
	}
	m.imported("%s%s", path, accessSummary(a))
}
