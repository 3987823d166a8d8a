package telegram

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

// TestInboundThroughPolling checks normalisation end to end: group mention gating, mention
// by @username, reply to the bot and forum topics, as delivered by Run.
func TestInboundThroughPolling(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	box := newInbox()
	run(t, b, box.deliver)
	bot := s.BotUser()
	const group = -1001234

	plain := s.Message(group, telego.ChatTypeSupergroup, 42, "hello everyone")
	s.Queue(telego.Update{Message: plain})
	if in := box.next(t); in.Mentioned || in.ChatType != messages.ChatGroup || in.ChatID != "-1001234" {
		t.Errorf("group message without mention = %+v, want a group message not mentioned", in)
	}

	mention := s.Message(group, telego.ChatTypeSupergroup, 42, "hey @Reef_Test_Bot what's up")
	mention.Entities = []telego.MessageEntity{{Type: telego.EntityTypeMention, Offset: 4, Length: 14}}
	s.Queue(telego.Update{Message: mention})
	if in := box.next(t); !in.Mentioned {
		t.Errorf("@username mention: Mentioned = false, want true")
	}

	reply := s.Message(group, telego.ChatTypeSupergroup, 42, "and then?")
	reply.ReplyToMessage = &telego.Message{MessageID: 7, From: &bot, Chat: reply.Chat, Text: "earlier answer"}
	s.Queue(telego.Update{Message: reply})
	if in := box.next(t); !in.Mentioned || in.ReplyTo != "earlier answer" {
		t.Errorf("reply to the bot = %+v, want Mentioned and ReplyTo %q", in, "earlier answer")
	}

	topic := s.Message(group, telego.ChatTypeSupergroup, 42, "in a topic")
	topic.MessageThreadID, topic.IsTopicMessage = 77, true
	topic.Chat.IsForum = true
	topic.ReplyToMessage = &telego.Message{MessageID: 77, From: &telego.User{ID: 42}, Chat: topic.Chat}
	s.Queue(telego.Update{Message: topic})
	if in := box.next(t); in.ChatType != messages.ChatThread || in.ThreadID != "77" || in.ReplyTo != "" || in.Mentioned {
		t.Errorf("forum topic message = %+v, want a thread 77, no quote, not mentioned", in)
	}
}

func TestInbound(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, func(c *Config) { c.Account = "main" })
	bot := s.BotUser()
	b.self.Store(&bot)
	date := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	msg := func(chatType string, chat int64, text string) *telego.Message {
		return &telego.Message{
			MessageID: 9, Date: date.Unix(), Text: text,
			Chat: telego.Chat{ID: chat, Type: chatType},
			From: &telego.User{ID: 42, FirstName: "Ada", LastName: "Lovelace", Username: "ada"},
		}
	}
	emojiMention := msg(telego.ChatTypeGroup, -5, "😀😀 @reef_test_bot hi")
	emojiMention.Entities = []telego.MessageEntity{{Type: telego.EntityTypeMention, Offset: 5, Length: 14}}
	otherMention := msg(telego.ChatTypeGroup, -5, "@someone_else hi")
	otherMention.Entities = []telego.MessageEntity{{Type: telego.EntityTypeMention, Offset: 0, Length: 13}}
	textMention := msg(telego.ChatTypeGroup, -5, "Reef, hi")
	textMention.Entities = []telego.MessageEntity{{Type: telego.EntityTypeTextMention, Offset: 0, Length: 4, User: &bot}}
	command := msg(telego.ChatTypeGroup, -5, "/status@reef_test_bot")
	command.Entities = []telego.MessageEntity{{Type: telego.EntityTypeBotCommand, Offset: 0, Length: 21}}
	otherCommand := msg(telego.ChatTypeGroup, -5, "/status@other_bot")
	otherCommand.Entities = []telego.MessageEntity{{Type: telego.EntityTypeBotCommand, Offset: 0, Length: 17}}
	caption := msg(telego.ChatTypePrivate, 42, "")
	caption.Caption = "look at this"
	photo := msg(telego.ChatTypePrivate, 42, "")
	photo.Caption, photo.Photo = "look at this", []telego.PhotoSize{{FileID: "p1", Width: 90, Height: 90}}
	voice := msg(telego.ChatTypePrivate, 42, "")
	voice.Voice = &telego.Voice{FileID: "v1", Duration: 3}
	document := msg(telego.ChatTypePrivate, 42, "")
	document.Document = &telego.Document{FileID: "d1", FileName: "report.pdf"}
	groupPhoto := msg(telego.ChatTypeGroup, -5, "")
	groupPhoto.Caption, groupPhoto.Photo = "@reef_test_bot what is this?", []telego.PhotoSize{{FileID: "p2"}}
	groupPhoto.CaptionEntities = []telego.MessageEntity{{Type: telego.EntityTypeMention, Offset: 0, Length: 14}}
	fromBot := msg(telego.ChatTypeGroup, -5, "I am a bot")
	fromBot.From.IsBot = true
	service := msg(telego.ChatTypeGroup, -5, "")
	service.NewChatMembers = []telego.User{{ID: 43}}
	edited := msg(telego.ChatTypePrivate, 42, "fixed typo")
	edited.EditDate = date.Add(time.Minute).Unix()

	want := func(change func(*messages.Inbound)) *messages.Inbound {
		in := &messages.Inbound{Channel: "telegram", Account: "main", ChatID: "42", ChatType: messages.ChatDirect,
			SenderID: "42", SenderName: "Ada Lovelace", MessageID: "42:9", Mentioned: true, Time: date}
		change(in)
		return in
	}
	group := func(in *messages.Inbound) {
		in.ChatID, in.ChatType, in.MessageID, in.Mentioned = "-5", messages.ChatGroup, "-5:9", false
	}
	tests := []struct {
		name   string
		update telego.Update
		want   *messages.Inbound // nil: ignored
	}{
		{"private", telego.Update{Message: msg(telego.ChatTypePrivate, 42, "hi")}, want(func(in *messages.Inbound) { in.Text = "hi" })},
		{"mention after emoji (UTF-16 offsets)", telego.Update{Message: emojiMention}, want(func(in *messages.Inbound) {
			group(in)
			in.Text, in.Mentioned = emojiMention.Text, true
		})},
		{"mention of someone else", telego.Update{Message: otherMention}, want(func(in *messages.Inbound) { group(in); in.Text = otherMention.Text })},
		{"text mention", telego.Update{Message: textMention}, want(func(in *messages.Inbound) { group(in); in.Text, in.Mentioned = "Reef, hi", true })},
		{"command to the bot", telego.Update{Message: command}, want(func(in *messages.Inbound) { group(in); in.Text, in.Mentioned = command.Text, true })},
		{"command to another bot", telego.Update{Message: otherCommand}, nil},
		{"caption", telego.Update{Message: caption}, want(func(in *messages.Inbound) { in.Text = "look at this" })},
		{"photo with a caption", telego.Update{Message: photo}, want(func(in *messages.Inbound) {
			in.Text, in.Media = "look at this", []messages.Media{{Kind: messages.MediaImage, MIME: "image/jpeg", Ref: "p1"}}
		})},
		{"voice message", telego.Update{Message: voice}, want(func(in *messages.Inbound) {
			in.Text, in.Media = "", []messages.Media{{Kind: messages.MediaVoice, MIME: "audio/ogg", Ref: "v1"}}
		})},
		{"file", telego.Update{Message: document}, want(func(in *messages.Inbound) {
			in.Text, in.Media = "", []messages.Media{{Kind: messages.MediaDocument, Name: "report.pdf", Ref: "d1"}}
		})},
		{"photo mentioning the bot in a group", telego.Update{Message: groupPhoto}, want(func(in *messages.Inbound) {
			group(in)
			in.Text, in.Mentioned = "@reef_test_bot what is this?", true
			in.Media = []messages.Media{{Kind: messages.MediaImage, MIME: "image/jpeg", Ref: "p2"}}
		})},
		{"edited", telego.Update{EditedMessage: edited}, want(func(in *messages.Inbound) {
			in.Text, in.MessageID, in.Time = "fixed typo", "42:9:edit:"+strconv.FormatInt(edited.EditDate, 10), date.Add(time.Minute)
		})},
		{"from a bot", telego.Update{Message: fromBot}, nil},
		{"service message", telego.Update{Message: service}, nil},
		{"other update kind", telego.Update{CallbackQuery: &telego.CallbackQuery{ID: "1"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := b.inbound(&tt.update)
			if tt.want == nil {
				if ok {
					t.Errorf("inbound = %+v, want the update ignored", got)
				}
				return
			}
			if !ok {
				t.Fatal("update ignored, want an inbound message")
			}
			if diff := cmp.Diff(*tt.want, got); diff != "" {
				t.Errorf("inbound (-want +got):\n%s", diff)
			}
		})
	}
}
