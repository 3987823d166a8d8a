// Package channels defines how reef talks to people: the Channel interface every platform
// adapter implements, and optional abilities (editing, typing) found by type assertion.
// Adapters live in subpackages (terminal, telegram, discord, feishu).
package channels

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/reefgw/reef/messages"
)

// Deliver hands one inbound message to reef. It returns nil only after the message is durably
// accepted (or recognised as a duplicate); only then may the channel acknowledge the platform.
// An error means the message was not accepted: do not acknowledge, let the platform redeliver.
type Deliver func(ctx context.Context, in messages.Inbound) error

// DeliverAll hands reef the messages of one platform batch at once (a Telegram getUpdates
// answer) and returns one error per message, each with Deliver's meaning. The batch is
// accepted with one write to disk instead of one per message. A chat's messages are accepted
// in the order given; once one of them is refused, the chat's later ones are not attempted
// (ErrNotAttempted), so that the platform delivers them again in order.
type DeliverAll func(ctx context.Context, ins []messages.Inbound) []error

// One delivers a single message through d.
func (d DeliverAll) One(ctx context.Context, in messages.Inbound) error {
	return d(ctx, []messages.Inbound{in})[0]
}

// ErrNotAttempted is DeliverAll's error for a message left because an earlier message of
// the same chat in the batch was refused.
var ErrNotAttempted = errors.New("not attempted after an earlier message of the same chat was refused")

// BatchRunner is implemented by channels whose platform hands over messages in batches: the
// connector runs them with RunBatches instead of Run. RunBatches is Run with a DeliverAll.
type BatchRunner interface {
	RunBatches(ctx context.Context, deliver DeliverAll) error
}

// Concurrently makes a DeliverAll of a Deliver for callers that have no batch intake: it
// delivers the chats of a batch concurrently, so their writes can share Storage's group
// commits, and each chat's messages in order.
func Concurrently(deliver Deliver) DeliverAll {
	return func(ctx context.Context, ins []messages.Inbound) []error {
		errs := make([]error, len(ins))
		if len(ins) == 1 {
			errs[0] = deliver(ctx, ins[0])
			return errs
		}
		byChat := map[string][]int{}
		var order []string
		for i := range ins {
			chat := ins[i].ChatID
			if _, ok := byChat[chat]; !ok {
				order = append(order, chat)
			}
			byChat[chat] = append(byChat[chat], i)
		}
		var wg sync.WaitGroup
		for _, chat := range order {
			wg.Go(func() {
				idx := byChat[chat]
				for n, i := range idx {
					if errs[i] = deliver(ctx, ins[i]); errs[i] != nil {
						for _, j := range idx[n+1:] {
							errs[j] = ErrNotAttempted
						}
						return
					}
				}
			})
		}
		wg.Wait()
		return errs
	}
}

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

// ThreadTyper is implemented by channels whose typing indicator can show inside a thread of
// a chat (on Discord a thread is a channel of its own).
type ThreadTyper interface {
	TypingInThread(ctx context.Context, chatID, threadID string) error
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

// EditLimits are how often a platform lets a bot edit its messages, for pacing the edits
// that show a run's progress (the Connector coalesces them to stay under these).
type EditLimits struct {
	PerChat    time.Duration // least time between the end of one edit in a chat and the next
	PerSecond  float64       // progress edits per second across the account (0: no limit)
	PerMessage int           // edits one message takes at most (0: no limit)
}

// EditPacer is implemented by channels whose platform limits the rate of edits.
type EditPacer interface {
	EditLimits() EditLimits
}

// OnceSender is implemented by channels whose Send delivers a stored reply (OutboxSeq set)
// at most once by itself: each message is marked with the reply's outbox row, and a reply
// that may have reached the platform already (Outbound.Resent, or an earlier Send whose
// outcome was unknown) is looked for before anything is sent again. When SendsOnce reports
// true the Connector sends a quick reply as new messages, without the "…" draft it
// otherwise edits the reply into to make a resend harmless (an edit each reply, which costs
// most where edits are scarce: Slack's chat.update).
type OnceSender interface {
	SendsOnce() bool
}

// ShowDelayer is implemented by channels that want a run shown (its draft, typing) only
// once it has gone on for ShowDelay: platforms whose edits are scarce show the runs that
// last, and a quick answer comes as one message. The Connector waits the longer of this
// and the account's streaming startDelay.
type ShowDelayer interface {
	ShowDelay() time.Duration
}

// Deleter is implemented by channels that can delete a message they sent.
type Deleter interface {
	Delete(ctx context.Context, chatID, messageID string) error
}

// Reactor is implemented by channels that can set the bot's emoji reaction on a message of
// a chat (the message tool's react action).
type Reactor interface {
	React(ctx context.Context, chatID, messageID, emoji string) error
}

// Reachable is implemented by channels that report when a call to the platform succeeded
// (Telegram: every getUpdates answer), so that replies waiting for the platform go out as
// soon as it is back. The connector calls OnReachable before Run; fn must not block.
type Reachable interface {
	OnReachable(fn func())
}

// Unreachable is implemented by channels that retry failed calls to the platform inside Run
// (Telegram's getUpdates): fn is called with the failure and the wait before the next try,
// so that the channel shows as reconnecting until a call succeeds again (Reachable). The
// connector calls OnUnreachable before Run; fn must not block.
type Unreachable interface {
	OnUnreachable(fn func(err error, retryIn time.Duration))
}

// ID names one bot account of a channel: the Connector that runs it, the keys of the
// gateway's per-account settings (access rules, tool grants). The account of a platform
// block's own keys is "" and its ID the channel's name ("telegram"); a named account's is
// "telegram:work".
func ID(channel, account string) string {
	if account == "" {
		return channel
	}
	return channel + ":" + account
}

// SplitID is the inverse of ID.
func SplitID(id string) (channel, account string) {
	channel, account, _ = strings.Cut(id, ":")
	return channel, account
}
