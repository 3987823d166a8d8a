package main

import (
	"context"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/configs"
)

// checkSlack asks Slack, for each configured Slack app, whether its bot token works and has
// the scopes reef needs (auth.test and its X-OAuth-Scopes header), and names those missing.
func (d *doctor) checkSlack(cfg *configs.Config) {
	for _, a := range cfg.Channels.Accounts() {
		s := a.Slack
		if s == nil {
			continue
		}
		name := channels.ID(a.Channel, a.Account)
		b, err := slack.New(slack.Config{BotToken: s.BotToken, AppToken: s.AppToken, SigningSecret: s.SigningSecret,
			Mode: s.Mode, EventsListen: s.EventsListen, EventsPath: s.EventsPath, APIURL: s.APIURL}, zerolog.Nop())
		if err != nil {
			d.fail(name, err.Error(), "see docs/channels.md#slack")
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		team, missing, err := b.Scopes(ctx)
		cancel()
		switch {
		case err != nil:
			d.fail(name, strings.TrimPrefix(err.Error(), "slack: "), "check botToken (xoxb-…, OAuth & Permissions) and that Slack is reachable")
		case len(missing) > 0:
			d.fail(name, "the bot token lacks the scopes "+strings.Join(missing, ", "),
				"add them under OAuth & Permissions → Bot Token Scopes, then reinstall the app to the workspace")
		default:
			d.ok(name, "workspace "+team+", every scope reef needs ("+s.Mode+" mode)")
		}
	}
}
