package telegram

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/messages"
)

// ChannelName is the Inbound.Channel of every message from this package.
const ChannelName = "telegram"

// allowedUpdates are the update kinds reef asks for.
var allowedUpdates = []string{telego.MessageUpdates, telego.EditedMessageUpdates}

// inbound normalises an update into an Inbound. ok is false for updates reef ignores:
// other kinds, messages from bots and service messages (joins, pins, topic changes...);
// those are acknowledged without being delivered. Media comes with a note (mediaNote).
func (b *Bot) inbound(u *telego.Update) (in messages.Inbound, ok bool) {
	m, edited := u.Message, false
	if m == nil {
		m, edited = u.EditedMessage, true
	}
	if m == nil || m.From == nil || m.From.IsBot {
		return in, false
	}
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	files := inboundMedia(m)                                   // downloaded before the run (package media)
	if media := mediaNote(m); media != "" && len(files) == 0 { // stickers, locations...: told what came
		if text != "" {
			media = text + "\n" + media // appended, so the caption's entity offsets still hold
		}
		text = media
	}
	if text == "" && len(files) == 0 {
		return in, false
	}
	chat := strconv.FormatInt(m.Chat.ID, 10)
	in = messages.Inbound{
		Channel:    ChannelName,
		Account:    b.cfg.Account,
		ChatID:     chat,
		SenderID:   strconv.FormatInt(m.From.ID, 10),
		SenderName: senderName(m.From),
		MessageID:  chat + ":" + strconv.Itoa(m.MessageID),
		Text:       text,
		Time:       time.Unix(m.Date, 0).UTC(),
		Media:      files,
	}
	if edited {
		// An edit is a new message for reef; its own id keeps dedup from dropping it.
		in.MessageID += ":edit:" + strconv.FormatInt(m.EditDate, 10)
		in.Time = time.Unix(m.EditDate, 0).UTC()
	}
	switch {
	case m.Chat.Type == telego.ChatTypePrivate:
		in.ChatType = messages.ChatDirect
		in.Mentioned = true
	case m.IsTopicMessage && m.MessageThreadID != 0:
		in.ChatType = messages.ChatThread
		in.ThreadID = strconv.Itoa(m.MessageThreadID)
	default:
		in.ChatType = messages.ChatGroup
	}
	if r := m.ReplyToMessage; r != nil && !isTopicRoot(m, r) {
		in.ReplyTo = r.Text
		if in.ReplyTo == "" {
			in.ReplyTo = r.Caption
		}
	}
	if !in.Mentioned {
		in.Mentioned = b.mentions(m, text, entities)
	}
	if b.forAnotherBot(text, entities) {
		return in, false // "/status@other_bot" in a group: that bot's command, not ours
	}
	return in, true
}

// forAnotherBot reports whether text starts with a command addressed to another bot
// ("/status@other_bot"), which reef neither answers nor shows its model.
func (b *Bot) forAnotherBot(text string, entities []telego.MessageEntity) bool {
	me := b.self.Load()
	if me == nil || me.Username == "" || len(entities) == 0 {
		return false
	}
	e := entities[0]
	units := utf16.Encode([]rune(text))
	if e.Type != telego.EntityTypeBotCommand || e.Offset != 0 || e.Length <= 0 || e.Length > len(units) {
		return false
	}
	_, to, ok := strings.Cut(string(utf16.Decode(units[:e.Length])), "@")
	return ok && !strings.EqualFold(to, me.Username)
}

// isTopicRoot reports whether r is only the service message that created m's forum topic:
// Telegram sets reply_to_message to it on every message of the topic.
func isTopicRoot(m, r *telego.Message) bool {
	return m.IsTopicMessage && r.MessageID == m.MessageThreadID
}

// mentions reports whether m mentions the bot (@username, a text mention, /command@bot) or
// replies to one of its messages.
func (b *Bot) mentions(m *telego.Message, text string, entities []telego.MessageEntity) bool {
	me := b.self.Load()
	if me == nil {
		return false
	}
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == me.ID && !isTopicRoot(m, r) {
		return true
	}
	units := utf16.Encode([]rune(text))
	for _, e := range entities {
		if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > len(units) {
			continue
		}
		word := string(utf16.Decode(units[e.Offset : e.Offset+e.Length]))
		switch e.Type {
		case telego.EntityTypeMention:
			if me.Username != "" && strings.EqualFold(word, "@"+me.Username) {
				return true
			}
		case telego.EntityTypeTextMention:
			if e.User != nil && e.User.ID == me.ID {
				return true
			}
		case telego.EntityTypeBotCommand:
			if _, to, ok := strings.Cut(word, "@"); ok && me.Username != "" && strings.EqualFold(to, me.Username) {
				return true
			}
		}
	}
	return false
}

func senderName(u *telego.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" && u.Username != "" {
		name = "@" + u.Username
	}
	return name
}

// mediaNote describes what a message carries besides text, in brackets ("[photo]",
// "[file: report.pdf]"), or "" for a plain text message. Files reef downloads (inboundMedia)
// get no note: the run describes them once saved.
func mediaNote(m *telego.Message) string {
	switch {
	case len(m.Photo) > 0:
		return "[photo]"
	case m.Document != nil:
		return "[file: " + orUnnamed(m.Document.FileName) + "]"
	case m.Voice != nil:
		return "[voice message]"
	case m.Audio != nil:
		return "[audio: " + orUnnamed(m.Audio.Title+m.Audio.FileName) + "]"
	case m.Video != nil, m.VideoNote != nil, m.Animation != nil:
		return "[video]"
	case m.Sticker != nil:
		return "[sticker " + m.Sticker.Emoji + "]"
	case m.Location != nil:
		return fmt.Sprintf("[location: %.5f, %.5f]", m.Location.Latitude, m.Location.Longitude)
	case m.Contact != nil:
		return "[contact: " + strings.TrimSpace(m.Contact.FirstName+" "+m.Contact.LastName) + "]"
	case m.Poll != nil:
		return "[poll: " + m.Poll.Question + "]"
	}
	return ""
}

func orUnnamed(s string) string {
	if s == "" {
		return "unnamed"
	}
	return s
}
