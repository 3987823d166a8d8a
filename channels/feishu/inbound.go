package feishu

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/reefgw/reef/messages"
)

// EventMessageReceive is the event type of a message sent to the bot.
const EventMessageReceive = "im.message.receive_v1"

// normalize turns an im.message.receive_v1 event into an Inbound. ok is false for events to
// skip: messages sent by the bot itself or another app, and malformed events.
func (b *Bot) normalize(ev *larkim.P2MessageReceiveV1) (in messages.Inbound, ok bool) {
	if ev == nil || ev.Event == nil || ev.Event.Message == nil || ev.Event.Sender == nil {
		return in, false
	}
	msg, sender := ev.Event.Message, ev.Event.Sender
	openID, botName := b.self()
	senderID := ""
	if sender.SenderId != nil {
		senderID = str(sender.SenderId.OpenId)
	}
	if t := str(sender.SenderType); t != "" && t != "user" || senderID == "" || senderID == openID {
		return in, false
	}
	in = messages.Inbound{
		Channel:   "feishu",
		ChatID:    str(msg.ChatId),
		SenderID:  senderID,
		MessageID: str(msg.MessageId),
		ChatType:  messages.ChatGroup,
	}
	if in.ChatID == "" || in.MessageID == "" {
		return in, false
	}
	if str(msg.ChatType) == "p2p" {
		in.ChatType = messages.ChatDirect
		in.Mentioned = true
	} else if tid := str(msg.ThreadId); tid != "" {
		in.ChatType, in.ThreadID = messages.ChatThread, tid
	}
	if ms, err := strconv.ParseInt(str(msg.CreateTime), 10, 64); err == nil && ms > 0 {
		in.Time = time.UnixMilli(ms)
	}
	m := mentionsOf(msg.Mentions, openID, botName)
	if m.bot {
		in.Mentioned = true
	}
	in.Media = inboundMedia(in.MessageID, str(msg.MessageType), str(msg.Content)) // downloaded before the run
	// A post's text comes with its images; other messages with a file are that file.
	if len(in.Media) == 0 || str(msg.MessageType) == "post" {
		in.Text = messageText(str(msg.MessageType), str(msg.Content), m)
	}
	return in, true
}

// mentions maps the placeholders of a message (@_user_1...) to what the text should show.
type mentions struct {
	keys    []string          // longest first, so @_user_10 is replaced before @_user_1
	display map[string]string // key → "@Name", or "" for the bot's own mention
	bot     bool              // the bot is among them
}

func mentionsOf(list []*larkim.MentionEvent, botOpenID, botName string) mentions {
	m := mentions{display: map[string]string{}}
	for _, me := range list {
		if me == nil || str(me.Key) == "" {
			continue
		}
		key, name, id := str(me.Key), str(me.Name), ""
		if me.Id != nil {
			id = str(me.Id.OpenId)
		}
		isBot := botOpenID != "" && id == botOpenID || botOpenID == "" && botName != "" && name == botName
		if isBot {
			m.bot = true
			m.display[key] = ""
		} else {
			m.display[key] = "@" + name
		}
		m.keys = append(m.keys, key)
	}
	sort.Slice(m.keys, func(i, j int) bool { return len(m.keys[i]) > len(m.keys[j]) })
	return m
}

// replace substitutes the mention placeholders in s.
func (m mentions) replace(s string) string {
	for _, k := range m.keys {
		if d := m.display[k]; d != "" {
			s = strings.ReplaceAll(s, k, d)
		} else {
			s = strings.ReplaceAll(s, k+" ", "")
			s = strings.ReplaceAll(s, k, "")
		}
	}
	return s
}

// messageText renders a message's content as plain text.
func messageText(msgType, content string, m mentions) string {
	switch msgType {
	case "text":
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(content), &c); err != nil {
			return ""
		}
		return strings.TrimSpace(m.replace(c.Text))
	case "post":
		return strings.TrimSpace(postText(content, m))
	case "":
		return ""
	default: // images, files, stickers...: tell the agent what arrived
		return "[" + msgType + "]"
	}
}

// postBody is the content of a rich-text (post) message.
type postBody struct {
	Title   string       `json:"title"`
	Content [][]postElem `json:"content"`
}

type postElem struct {
	Tag      string `json:"tag"`
	ImageKey string `json:"image_key"` // img; media (a video's cover)
	FileKey  string `json:"file_key"`  // media
	Text     string `json:"text"`
	Href     string `json:"href"`
	UserID   string `json:"user_id"`
	UserName string `json:"user_name"`
	Language string `json:"language"`
	Emoji    string `json:"emoji_type"`
}

// postText flattens a post: the title, then one line per paragraph. Received posts carry the
// body directly; sent ones are keyed by language (zh_cn, en_us...): both are accepted.
func postText(content string, m mentions) string {
	p, ok := parsePost(content)
	if !ok {
		return ""
	}
	var lines []string
	if p.Title != "" {
		lines = append(lines, p.Title)
	}
	for _, para := range p.Content {
		var sb strings.Builder
		for _, e := range para {
			sb.WriteString(elemText(e, m))
		}
		lines = append(lines, strings.TrimSpace(sb.String()))
	}
	return strings.Join(lines, "\n")
}

// parsePost decodes a post's content: the body itself when received, keyed by language
// (zh_cn, en_us...) when sent.
func parsePost(content string) (postBody, bool) {
	var p postBody
	if err := json.Unmarshal([]byte(content), &p); err != nil {
		return p, false
	}
	if p.Title == "" && p.Content == nil {
		var langs map[string]json.RawMessage
		_ = json.Unmarshal([]byte(content), &langs)
		for _, lang := range []string{"zh_cn", "en_us", "ja_jp"} {
			if raw, ok := langs[lang]; ok && json.Unmarshal(raw, &p) == nil {
				break
			}
		}
	}
	return p, true
}

func elemText(e postElem, m mentions) string {
	switch e.Tag {
	case "text", "md":
		return m.replace(e.Text)
	case "a":
		if e.Text == "" || e.Text == e.Href {
			return e.Href
		}
		return e.Text + " (" + e.Href + ")"
	case "at":
		if d, ok := m.display[e.UserID]; ok {
			return d
		}
		if e.UserID == "all" {
			return "@all"
		}
		if e.UserName != "" {
			return "@" + e.UserName
		}
		return ""
	case "code_block":
		return "```" + strings.ToLower(e.Language) + "\n" + strings.TrimRight(e.Text, "\n") + "\n```"
	case "img":
		return "[image]"
	case "media":
		return "[video]"
	case "emotion":
		return ":" + e.Emoji + ":"
	case "hr":
		return "---"
	}
	return e.Text
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
