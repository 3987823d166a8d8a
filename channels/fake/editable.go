package fake

import (
	"context"
	"fmt"
	"sync"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Editable is a fake platform whose bot can edit and delete what it sent, and which keeps
// each chat as its user would see it.
type Editable struct {
	*Channel
	mu     sync.Mutex
	chats  map[string][]*shown
	byID   map[string]*shown
	Edits  int            // successful edits that changed a message
	typing map[string]int // chat → typing actions
}

type shown struct {
	id      string
	text    string
	deleted bool
	history []string // the text as sent, then each change an edit made
	deletes int      // Delete calls that named it
}

var (
	_ channels.Editor  = (*Editable)(nil)
	_ channels.Deleter = (*Editable)(nil)
	_ channels.Typer   = (*Editable)(nil)
)

// NewEditable returns an editable fake channel.
func NewEditable() *Editable {
	return &Editable{Channel: New(), chats: map[string][]*shown{}, byID: map[string]*shown{}, typing: map[string]int{}}
}

// Send records the message in its chat, then publishes it on Sent like Channel.
func (e *Editable) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	ids, err := e.Channel.Send(ctx, out)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	m := &shown{id: ids[0], text: out.Text, history: []string{out.Text}}
	e.chats[out.ChatID] = append(e.chats[out.ChatID], m)
	e.byID[ids[0]] = m
	e.mu.Unlock()
	return ids, nil
}

// Edit changes a message; an unchanged text is not an error (as on Telegram).
func (e *Editable) Edit(_ context.Context, chatID, messageID, text string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.byID[messageID]
	if m == nil || m.deleted {
		return fmt.Errorf("fake: edit %s: no such message: %w", messageID, channels.ErrPermanent)
	}
	if m.text != text {
		m.text = text
		m.history = append(m.history, text)
		e.Edits++
	}
	return nil
}

// Delete removes a message.
func (e *Editable) Delete(_ context.Context, chatID, messageID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m := e.byID[messageID]; m != nil {
		m.deleted = true
		m.deletes++
	}
	return nil
}

// History returns what a message showed (as sent, then each edit that changed it), and how
// often it was deleted (a second Delete of a deleted message counts too).
func (e *Editable) History(messageID string) (texts []string, deletes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.byID[messageID]
	if m == nil {
		return nil, 0
	}
	return append([]string(nil), m.history...), m.deletes
}

// Shown returns the texts a chat's user sees, in order.
func (e *Editable) Shown(chatID string) []string {
	return e.visible(chatID, func(m *shown) string { return m.text })
}

// IDs returns the platform ids of the messages a chat's user sees, in order.
func (e *Editable) IDs(chatID string) []string {
	return e.visible(chatID, func(m *shown) string { return m.id })
}

func (e *Editable) visible(chatID string, field func(*shown) string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, m := range e.chats[chatID] {
		if !m.deleted {
			out = append(out, field(m))
		}
	}
	return out
}

// Typing counts a typing action in chatID.
func (e *Editable) Typing(_ context.Context, chatID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.typing[chatID]++
	return nil
}

// Typings returns how many typing actions chatID has had.
func (e *Editable) Typings(chatID string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.typing[chatID]
}
