// Package channels defines how reef talks to people: the Channel interface every platform
// adapter implements, and optional abilities (editing, typing) found by type assertion.
// Adapters live in subpackages (terminal, telegram, discord, feishu, webchat).
package channels

import (
	"context"
	"errors"

	"github.com/reefgw/reef/messages"
)

// Deliver hands one inbound message to reef. It returns nil only after the message is durably
// accepted (or recognised as a duplicate); only then may the channel acknowledge the platform.
// An error means the message was not accepted: do not acknowledge, let the platform redeliver.
type Deliver func(ctx context.Context, in messages.Inbound) error

// Channel is one platform account.
type Channel interface {
	// Run receives messages and calls deliver for each, until ctx ends. It returns nil when
	// ctx ended, ErrAuth (wrapped) when the platform refused the credentials, or another error
	// when the connection failed and should be restarted.
	Run(ctx context.Context, deliver Deliver) error
	// Send delivers a reply, chunked to the platform's limits, and returns the platform ids
	// of the messages it created.
	Send(ctx context.Context, out messages.Outbound) ([]string, error)
}

// ProgressRenderer is implemented by channels that show a run's progress (tool lines, drafts).
type ProgressRenderer interface {
	Progress(ctx context.Context, ev messages.TurnEvent)
}

// Typer is implemented by channels that can show a typing indicator.
type Typer interface {
	Typing(ctx context.Context, chatID string) error
}

// ErrAuth means the platform rejected the credentials: restarting will not help.
var ErrAuth = errors.New("platform rejected the credentials")

// ErrPermanent means the platform refused a message for good (the user blocked the bot, the
// chat is gone, the bot was removed): retrying will not help.
var ErrPermanent = errors.New("platform refused the message permanently")

// Editor is implemented by channels that can change a message they sent.
type Editor interface {
	Edit(ctx context.Context, chatID, messageID, text string) error
}

// Deleter is implemented by channels that can delete a message they sent.
type Deleter interface {
	Delete(ctx context.Context, chatID, messageID string) error
}
