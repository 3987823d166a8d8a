package slack

import (
	"context"
	"net/http"
	"slices"
	"strings"

	slackapi "github.com/slack-go/slack"
)

// RequiredScopes are the bot token scopes reef needs: reading the DMs and channel messages
// it answers (and its own replies, looked for after a restart: once.go), posting and editing
// replies, files both ways, and reactions.
var RequiredScopes = []string{"app_mentions:read", "channels:history", "chat:write", "files:read", "files:write",
	"im:history", "reactions:write"}

// OptionalScopes add private channels, group DMs and the assistant thread status.
var OptionalScopes = []string{"groups:history", "mpim:history", "assistant:write"}

// Scopes asks auth.test who the bot is and which scopes its token has (Slack's
// X-OAuth-Scopes header), and returns the RequiredScopes it lacks. An error means the token
// was refused (wrapping channels.ErrAuth) or Slack could not be reached.
func (b *Bot) Scopes(ctx context.Context) (team string, missing []string, err error) {
	var granted string
	hc := b.cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	api := slackapi.New(b.cfg.BotToken, slackapi.OptionAPIURL(b.cfg.APIURL), slackapi.OptionHTTPClient(hc),
		slackapi.OptionOnResponseHeaders(func(path string, h http.Header) {
			if path == "auth.test" {
				granted = h.Get("X-OAuth-Scopes")
			}
		}))
	res, err := api.AuthTestContext(ctx)
	if err != nil {
		return "", nil, b.apiError("auth.test", err)
	}
	have := strings.Split(strings.ReplaceAll(granted, " ", ""), ",")
	for _, s := range RequiredScopes {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	return res.Team, missing, nil
}
