package slack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/messages"
)

var approvalChoices = []messages.Choice{{Label: "Approve once", Text: "/approve ab12"},
	{Label: "Always approve", Text: "/approve ab12 always"}, {Label: "Deny", Text: "/deny ab12"}}

// TestApprovalButtons: with buttons on (the app has Interactivity), an approval request shows
// its choices as buttons, and a press comes back as the command it stands for, from the
// person who pressed it, acknowledged once reef took it.
func TestApprovalButtons(t *testing.T) {
	srv := slacktest.New(t, slacktest.Config{})
	c := srv.Config()
	b, err := slack.New(slack.Config{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: srv.APIURL, Buttons: true,
		MediaClient: &http.Client{Timeout: 10 * time.Second}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	in := newInbox()
	run(t, b, in.deliver)
	text := "Approval needed [ab12]: the agent wants to run\nls\n/approve ab12 — run it once\n/deny ab12 — refuse it"
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "D1", Text: text, Direct: true, Choices: approvalChoices})
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	msgs := srv.Messages("D1")
	if len(msgs) != 1 || msgs[0].Blocks == nil || !strings.Contains(msgs[0].Text, "/approve ab12") {
		t.Fatalf("the request shows %+v, want its text with buttons", msgs)
	}
	if err := srv.Press("D1", ids[0], "U1", "Always approve"); err != nil {
		t.Fatal(err)
	}
	got := in.next(t)
	if got.Text != "/approve ab12 always" || got.SenderID != "U1" || got.ChatID != "D1" || got.ChatType != messages.ChatDirect {
		t.Errorf("the press came as %+v, want /approve ab12 always from U1 in the DM", got)
	}
	waitFor(t, func() bool { return srv.Acked() == 1 && srv.Pending() == 0 })
}

// TestNoButtonsWithoutInteractivity: without buttons on, the same request is text only (its
// commands named in it), and there is nothing to press.
func TestNoButtonsWithoutInteractivity(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "D1", Text: "/approve ab12 — run it once", Direct: true, Choices: approvalChoices})
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	if m := srv.Messages("D1"); len(m) != 1 || m[0].Blocks != nil {
		t.Errorf("the request shows %+v, want text only", m)
	}
	if srv.Press("D1", ids[0], "U1", "Deny") == nil {
		t.Error("a button to press without interactivity")
	}
}
