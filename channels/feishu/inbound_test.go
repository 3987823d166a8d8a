package feishu_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// TestNormalize sends messages of every shape through the long connection and checks the
// Inbound each becomes.
func TestNormalize(t *testing.T) {
	srv, _, box := wsBot(t, zerolog.Nop())
	bot := srv.BotMention()
	bob := feishutest.Mention{OpenID: "ou_bob", Name: "Bob"}
	at := time.UnixMilli(1_700_000_000_123)
	tests := []struct {
		name string
		msg  feishutest.Message
		want messages.Inbound
	}{
		{"direct", feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Text: "hello", Time: at},
			messages.Inbound{ChatID: "oc_dm", ChatType: messages.ChatDirect, SenderID: "ou_alice", Text: "hello", Mentioned: true, Time: at}},
		{"group without mention", feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: "ou_alice", Text: "hello all", Time: at},
			messages.Inbound{ChatID: "oc_g", ChatType: messages.ChatGroup, SenderID: "ou_alice", Text: "hello all", Time: at}},
		{"group mentioning the bot", feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: "ou_alice",
			Text: "@_user_1 what time is it?", Mentions: []feishutest.Mention{bot}, Time: at},
			messages.Inbound{ChatID: "oc_g", ChatType: messages.ChatGroup, SenderID: "ou_alice", Text: "what time is it?", Mentioned: true, Time: at}},
		{"group mentioning someone else", feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: "ou_alice",
			Text: "@_user_1 ask me", Mentions: []feishutest.Mention{bob}, Time: at},
			messages.Inbound{ChatID: "oc_g", ChatType: messages.ChatGroup, SenderID: "ou_alice", Text: "@Bob ask me", Time: at}},
		{"both mentioned", feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: "ou_alice",
			Text: "@_user_2 please ask @_user_1", Mentions: []feishutest.Mention{bob, bot}, Time: at},
			messages.Inbound{ChatID: "oc_g", ChatType: messages.ChatGroup, SenderID: "ou_alice", Text: "please ask @Bob", Mentioned: true, Time: at}},
		{"thread", feishutest.Message{ChatID: "oc_g", ChatType: "group", ThreadID: "omt_1", SenderID: "ou_alice",
			Text: "@_user_1 in a thread", Mentions: []feishutest.Mention{bot}, Time: at},
			messages.Inbound{ChatID: "oc_g", ChatType: messages.ChatThread, ThreadID: "omt_1", SenderID: "ou_alice", Text: "in a thread", Mentioned: true, Time: at}},
		{"image", feishutest.Message{ChatID: "oc_dm", SenderID: "ou_alice", Type: "image", Content: `{"image_key":"img_1"}`, Time: at},
			messages.Inbound{ChatID: "oc_dm", ChatType: messages.ChatDirect, SenderID: "ou_alice", Mentioned: true, Time: at,
				Media: []messages.Media{{Kind: messages.MediaImage, Ref: "<mid>/img_1/image"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, mid := srv.Push(tt.msg)
			got := box.next(t)
			tt.want.Channel, tt.want.MessageID = "feishu", mid
			for i := range tt.want.Media {
				tt.want.Media[i].Ref = strings.ReplaceAll(tt.want.Media[i].Ref, "<mid>", mid)
			}
			if !got.Time.Equal(tt.want.Time) {
				t.Errorf("time = %v, want %v", got.Time, tt.want.Time)
			}
			got.Time = tt.want.Time
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("inbound (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPostFlattened(t *testing.T) {
	srv, _, box := wsBot(t, zerolog.Nop())
	mid := srv.PostSays("oc_g", "group", "ou_alice", "Plan", [][]feishutest.PostElem{
		{{"tag": "at", "user_id": "@_user_1", "user_name": "reef"}, {"tag": "text", "text": " step one, ask "}, {"tag": "at", "user_id": "@_user_2", "user_name": "Bob"}},
		{{"tag": "text", "text": "see "}, {"tag": "a", "text": "the docs", "href": "https://example.com/d"}},
		{{"tag": "code_block", "language": "GO", "text": "x := 1\n"}},
	}, srv.BotMention(), feishutest.Mention{OpenID: "ou_bob", Name: "Bob"})
	got := box.next(t)
	want := "Plan\nstep one, ask @Bob\nsee the docs (https://example.com/d)\n```go\nx := 1\n```"
	if got.Text != want || !got.Mentioned || got.MessageID != mid {
		t.Errorf("got text %q mentioned %v id %s, want %q mentioned true id %s", got.Text, got.Mentioned, got.MessageID, want, mid)
	}
}

func TestSkipsAppsAndItself(t *testing.T) {
	srv, _, box := wsBot(t, zerolog.Nop())
	srv.Push(feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: "ou_other_bot", SenderType: "app", Text: "beep"})
	srv.Push(feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: srv.BotOpenID, Text: "my own words"})
	srv.UserSays("oc_dm", "ou_alice", "human here")
	if got := box.next(t).Text; got != "human here" {
		t.Errorf("first delivery %q, want the person's message (apps and the bot itself skipped)", got)
	}
	box.none(t, srv)
}

func TestManyMentionPlaceholders(t *testing.T) {
	srv, _, box := wsBot(t, zerolog.Nop())
	var ms []feishutest.Mention
	for i := 1; i <= 10; i++ {
		ms = append(ms, feishutest.Mention{OpenID: fmt.Sprintf("ou_%d", i), Name: fmt.Sprintf("U%d", i)})
	}
	srv.GroupSays("oc_g", "ou_alice", "@_user_10 and @_user_1", ms...)
	if got := box.next(t).Text; got != "@U10 and @U1" {
		t.Errorf("text = %q, want %q", got, "@U10 and @U1")
	}
}

func TestReplyToQuotesParent(t *testing.T) {
	srv, bot, box := wsBot(t, zerolog.Nop())
	first := srv.GroupSays("oc_g", "ou_alice", "@_user_1 deploy on friday?", srv.BotMention())
	box.next(t)
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_g", ReplyToID: first, Text: "Better **Monday**."})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ parent, want string }{
		{first, "deploy on friday?"},   // a person's message, the bot's mention stripped
		{ids[0], "Better **Monday**."}, // the bot's own answer
		{"om_gone", ""},                // unknown: delivered without a quote
	}
	for _, tt := range tests {
		srv.Push(feishutest.Message{ChatID: "oc_g", ChatType: "group", SenderID: "ou_bob", ParentID: tt.parent,
			Text: "@_user_1 why?", Mentions: []feishutest.Mention{srv.BotMention()}})
		if got := box.next(t); got.ReplyTo != tt.want || got.Text != "why?" {
			t.Errorf("reply to %s: ReplyTo %q text %q, want %q and %q", tt.parent, got.ReplyTo, got.Text, tt.want, "why?")
		}
	}
}
