package slack_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/messages"
)

// eventsBot runs a bot in events mode and points the fake at its endpoint.
func eventsBot(t *testing.T, deliver channels.Deliver) (*slack.Bot, *slacktest.Server) {
	t.Helper()
	srv := slacktest.New(t, slacktest.Config{})
	c := srv.Config()
	b, err := slack.New(slack.Config{BotToken: c.BotToken, SigningSecret: c.SigningSecret, Mode: slack.ModeEvents,
		EventsListen: "127.0.0.1:0", APIURL: srv.APIURL}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, deliver)
	waitFor(t, func() bool { return b.EventsURL() != "" })
	srv.SetEventsURL(b.EventsURL())
	return b, srv
}

func post(t *testing.T, url string, body []byte, h map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func signed(secret string, body []byte, at time.Time) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	return map[string]string{"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": slacktest.Sign(secret, ts, body)}
}

func TestEventsEndpoint(t *testing.T) {
	in := newInbox()
	b, srv := eventsBot(t, in.deliver)
	secret := srv.Config().SigningSecret
	challenge := []byte(`{"type":"url_verification","challenge":"c-123","token":"x"}`)
	if code, body := post(t, b.EventsURL(), challenge, signed(secret, challenge, time.Now())); code != 200 || body != "c-123" {
		t.Errorf("url_verification = %d %q, want 200 c-123", code, body)
	}
	for name, h := range map[string]map[string]string{
		"unsigned":  {},
		"wrong key": signed("other", challenge, time.Now()),
		"replayed":  signed(secret, challenge, time.Now().Add(-10*time.Minute)),
	} {
		if code, _ := post(t, b.EventsURL(), challenge, h); code != http.StatusUnauthorized {
			t.Errorf("%s request answered %d, want 401", name, code)
		}
	}
	srv.UserSays(t, "D1", "U1", "over http")
	if got := in.next(t); got.Text != "over http" || got.ChatType != messages.ChatDirect {
		t.Errorf("got %+v", got)
	}
	waitFor(t, func() bool { return srv.Acked() == 1 })
}

func TestEventsRetriedUntilAccepted(t *testing.T) {
	in := newInbox()
	fails := 4 // more than the bot's own tries: the first request is answered 500
	_, srv := eventsBot(t, func(ctx context.Context, m messages.Inbound) error {
		if fails > 0 {
			fails--
			return errors.New("disk full")
		}
		return in.deliver(ctx, m)
	})
	srv.UserSays(t, "D1", "U1", "retry me")
	if got := in.next(t); got.Text != "retry me" {
		t.Errorf("got %q", got.Text)
	}
	in.none(t, 500*time.Millisecond)
	waitFor(t, func() bool { return srv.Acked() == 1 })
	if srv.Lost() != 0 {
		t.Errorf("lost %d", srv.Lost())
	}
}

func TestScopes(t *testing.T) {
	srv := slacktest.New(t, slacktest.Config{Scopes: "chat:write,im:history"})
	c := srv.Config()
	b, _ := slack.New(slack.Config{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: srv.APIURL}, testLog(t))
	_, missing, err := b.Scopes(context.Background())
	if err != nil || len(missing) != len(slack.RequiredScopes)-2 {
		t.Errorf("Scopes = %v, %v; want every required scope but chat:write and im:history", missing, err)
	}
	bad, _ := slack.New(slack.Config{BotToken: "xoxb-wrong", AppToken: c.AppToken, APIURL: srv.APIURL}, testLog(t))
	if _, _, err := bad.Scopes(context.Background()); !errors.Is(err, channels.ErrAuth) {
		t.Errorf("a wrong token: %v, want ErrAuth", err)
	}
	// Run stops with ErrAuth too, rather than reconnecting for ever.
	if err := bad.Run(context.Background(), newInbox().deliver); !errors.Is(err, channels.ErrAuth) {
		t.Errorf("Run with a wrong token = %v, want ErrAuth", err)
	}
}
