package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
)

// Sources used when wrapping parts of an inbound message.
const (
	SourceInbound = "inbound_metadata"
	SourceQuoted  = "quoted_message"
)

// inboundMeta is the untrusted metadata of a message, as the model sees it. Empty fields are
// omitted.
type inboundMeta struct {
	SenderID    string   `json:"sender_id,omitempty"`
	SenderName  string   `json:"sender_name,omitempty"`
	ChatID      string   `json:"chat_id,omitempty"`
	MessageID   string   `json:"message_id,omitempty"`
	ThreadID    string   `json:"thread_id,omitempty"`
	Timestamp   string   `json:"timestamp,omitempty"`
	IsGroup     bool     `json:"is_group,omitempty"`
	Mentioned   bool     `json:"mentioned,omitempty"`
	Attachments []string `json:"attachments,omitempty"`
}

func (m inboundMeta) empty() bool {
	return m.SenderID == "" && m.SenderName == "" && m.ChatID == "" && m.MessageID == "" && m.ThreadID == "" &&
		m.Timestamp == "" && !m.IsGroup && !m.Mentioned && len(m.Attachments) == 0
}

// FormatInbound returns the content of the user message the model sees for in: the message
// metadata as JSON and the quoted reply text, each wrapped with WrapUntrusted, then the text the
// person wrote. Marker-like sequences in that text are neutralised too, so a sender cannot forge
// a metadata block. Parts that are empty are left out.
func FormatInbound(in messages.Inbound) string {
	meta := inboundMeta{
		SenderID:    in.SenderID,
		SenderName:  in.SenderName,
		ChatID:      in.ChatID,
		MessageID:   in.MessageID,
		ThreadID:    in.ThreadID,
		IsGroup:     in.ChatType == messages.ChatGroup || in.ChatType == messages.ChatThread,
		Mentioned:   in.Mentioned,
		Attachments: in.Attachment,
	}
	if !in.Time.IsZero() {
		meta.Timestamp = in.Time.UTC().Format(time.RFC3339)
	}
	var b strings.Builder
	if !meta.empty() {
		var js bytes.Buffer
		enc := json.NewEncoder(&js) // escapes <, > and &: one more layer against forged markers
		if err := enc.Encode(meta); err == nil {
			b.WriteString("Message metadata:\n")
			b.WriteString(WrapUntrusted(SourceInbound, strings.TrimSpace(js.String())))
			b.WriteString("\n\n")
		}
	}
	if q := strings.TrimSpace(in.ReplyTo); q != "" {
		b.WriteString("Replying to this earlier message:\n")
		b.WriteString(WrapUntrusted(SourceQuoted, q))
		b.WriteString("\n\n")
	}
	b.WriteString(neutralizeMarkers(in.Text))
	return b.String()
}

// TrustedContext describes the conversation from what reef itself knows (the channel and the
// chat type, never anything a sender controls), for the system prompt.
func TrustedContext(channel string, chatType messages.ChatType) string {
	where := "this chat"
	if ch := sourceName(channel); channel != "" {
		where = "on " + ch
	}
	switch chatType {
	case messages.ChatGroup, messages.ChatThread:
		kind := "group chat"
		if chatType == messages.ChatThread {
			kind = "thread inside a group chat"
		}
		return "You are in a " + kind + " (" + where + ") with several people. Each message's metadata block names its sender; " +
			"people other than your user may write to you. Answer when you are mentioned or asked, or when you can really help; " +
			"otherwise reply " + SilentToken + ". Keep the user's private details out of the group."
	case messages.ChatDirect:
		return "You are in a direct, one-to-one conversation (" + where + ") with your user."
	}
	return "You are in " + where + "."
}
