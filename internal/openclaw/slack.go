package openclaw

import "strings"

// outSlack is reef's channels.slack.
type outSlack struct {
	BotToken      string `yaml:"botToken,omitempty"`
	AppToken      string `yaml:"appToken,omitempty"`
	SigningSecret string `yaml:"signingSecret,omitempty"`
	Mode          string `yaml:"mode,omitempty"`
	EventsPath    string `yaml:"eventsPath,omitempty"`
	outAccess     `yaml:",inline"`
	Accounts      map[string]*outSlack `yaml:"accounts,omitempty"`
}

// slack maps OpenClaw's channels.slack: Socket Mode (botToken and appToken) or HTTP mode
// (botToken and signingSecret, webhookPath) to reef's socket and events modes; the channels
// allowed (channels.<id>, with allow and requireMention) to groups.
func (m *mapper) slack(path, account string, b channelBlock, top bool) *outSlack {
	s := &outSlack{}
	if len(b.BotToken) > 0 || (top && len(b.Accounts) == 0) {
		s.BotToken = m.secret(b.BotToken, envFor("SLACK", account, "BOT_TOKEN"), path+".botToken", true)
		if strings.EqualFold(b.Mode, "http") {
			s.Mode, s.EventsPath = "events", b.WebhookPath
			s.SigningSecret = m.secret(b.SigningSecret, envFor("SLACK", account, "SIGNING_SECRET"), path+".signingSecret", true)
		} else {
			s.AppToken = m.secret(b.AppToken, envFor("SLACK", account, "APP_TOKEN"), path+".appToken", true)
		}
	}
	if len(b.Groups) == 0 {
		b.Groups = b.Channels // Slack's block names its allowed channels "channels"
	}
	s.outAccess = m.access(path, "slack", b, top)
	if top {
		def, named := accounts(m, path, b, m.slack)
		if def != nil {
			s.BotToken, s.AppToken = orDefault(def.BotToken, s.BotToken), orDefault(def.AppToken, s.AppToken)
			s.SigningSecret, s.Mode = orDefault(def.SigningSecret, s.SigningSecret), orDefault(def.Mode, s.Mode)
			s.outAccess = mergeAccess(s.outAccess, def.outAccess)
		}
		s.Accounts = named
	}
	m.importedChannel(path, top, s.outAccess)
	return s
}
