package slack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	slackapi "github.com/slack-go/slack"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Exactly once without drafts. Every message Send posts for a stored reply carries Slack
// message metadata naming the reply's outbox row and the chunk (event_type reef_reply,
// event_payload {row, part, parts}); the row is a hash of the session key and the outbox
// seq, so the metadata says nothing about who talks to whom. A reply that may already be
// on Slack is looked for before it is posted: one loaded from the outbox when its Session
// started (Outbound.Resent: a kill may have come between chat.postMessage and the commit
// that marks the row sent), and one whose earlier Send ended without a clear answer (a
// timeout, a lost connection, a chunk posted before a later one failed). The lookup reads
// the conversation after the message the reply answers (conversations.history, or
// conversations.replies in a thread) with include_all_metadata, and the chunks found are
// not posted again. Both methods are Tier 3 (50 a minute per workspace), so a reply sent for
// the first time is never looked up: the lookups are the rows a restart left behind.
//
// So Slack needs no "…" draft edited into each quick answer (SendsOnce): a reply that comes
// before the run is shown is one chat.postMessage. Files (files.completeUploadExternal)
// carry no metadata: a kill between a reply's text and its files may send the files again.

// MetadataEventType is the event_type of the metadata on reef's replies.
const MetadataEventType = "reef_reply"

// lookupPages bounds the pages of history (lookupPage messages each) read for one reply.
const (
	lookupPages = 5
	lookupPage  = 200
)

// uncertainMax bounds the replies remembered as maybe sent (a bound, not a policy).
const uncertainMax = 4096

// SendsOnce implements channels.OnceSender.
func (b *Bot) SendsOnce() bool { return true }

var _ channels.OnceSender = (*Bot)(nil)

// rowOf names a stored reply in metadata: a hash of its session key and its outbox seq; ""
// for a reply that is not stored (nothing to find again).
func rowOf(out messages.Outbound) string {
	if out.OutboxSeq == 0 || out.SessionKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(out.SessionKey))
	return hex.EncodeToString(sum[:12]) + "-" + strconv.FormatUint(out.OutboxSeq, 10)
}

// metadataOf is the metadata of chunk part (of parts) of the reply row.
func metadataOf(row string, part, parts int) slackapi.SlackMetadata {
	return slackapi.SlackMetadata{EventType: MetadataEventType,
		EventPayload: map[string]any{"row": row, "part": part, "parts": parts}}
}

// partOf returns the chunk a message holds when its metadata names row.
func partOf(m slackapi.Message, row string) (int, bool) {
	md := m.Metadata
	if md.EventType != MetadataEventType || md.EventPayload["row"] != row {
		return 0, false
	}
	switch p := md.EventPayload["part"].(type) {
	case float64:
		return int(p), true
	case int:
		return p, true
	}
	return 0, false
}

// maybeSent is the set of rows whose Send ended without a clear answer.
type maybeSent struct {
	mu   sync.Mutex
	rows map[string]bool
}

func (s *maybeSent) mark(row string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rows == nil || len(s.rows) >= uncertainMax {
		s.rows = map[string]bool{}
	}
	s.rows[row] = true
}

func (s *maybeSent) has(row string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows[row]
}

func (s *maybeSent) clear(row string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rows, row)
}

// unclear reports whether a failed post may have been posted all the same: anything but
// Slack's own answer (a refusal, a 429: neither posts).
func unclear(err error) bool {
	var se slackapi.SlackErrorResponse
	var rl *slackapi.RateLimitedError
	return err != nil && !errors.As(err, &se) && !errors.As(err, &rl) &&
		!errors.Is(err, channels.ErrPermanent) && !errors.Is(err, channels.ErrAuth)
}

// findSent returns the ts of each chunk of the reply row already on Slack, by part. A
// refusal that will not change (no history scope, the channel gone) is logged and leaves
// the reply to be posted: a lookup that cannot be made must not hold a reply forever.
func (b *Bot) findSent(ctx context.Context, out messages.Outbound, thread, row string) (map[int]string, error) {
	found, err := b.lookup(ctx, out, thread, row)
	if errors.Is(err, channels.ErrPermanent) {
		b.log.Warn().Err(err).Str("chat", out.ChatID).Msg("slack: cannot look for a reply a restart may have sent; sending it")
		return nil, nil
	}
	if err == nil && len(found) > 0 {
		b.log.Info().Str("chat", out.ChatID).Int("found", len(found)).Msg("slack: a reply was on Slack already; not sent again")
	}
	return found, err
}

func (b *Bot) lookup(ctx context.Context, out messages.Outbound, thread, row string) (map[int]string, error) {
	found := map[int]string{}
	self := b.self()
	note := func(msgs []slackapi.Message) {
		for _, m := range msgs {
			if self != "" && m.User != self {
				continue
			}
			if part, ok := partOf(m, row); ok {
				found[part] = m.Timestamp
			}
		}
	}
	oldest := out.ReplyToID // the reply came after the message it answers
	if !isTS(oldest) {
		oldest = "" // a slash command's or a button's id: the newest messages
	}
	cursor := ""
	for range lookupPages {
		var msgs []slackapi.Message
		var more bool
		var next string
		var err error
		if thread != "" {
			op := "conversations.replies"
			err = b.call(ctx, op, func() error {
				msgs, more, next, err = b.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{
					ChannelID: out.ChatID, Timestamp: thread, Oldest: oldest, Cursor: cursor, Limit: lookupPage,
					IncludeAllMetadata: true})
				return err
			})
		} else {
			var resp *slackapi.GetConversationHistoryResponse
			err = b.call(ctx, "conversations.history", func() error {
				resp, err = b.api.GetConversationHistoryContext(ctx, &slackapi.GetConversationHistoryParameters{
					ChannelID: out.ChatID, Oldest: oldest, Cursor: cursor, Limit: lookupPage, IncludeAllMetadata: true})
				return err
			})
			if resp != nil {
				msgs, more, next = resp.Messages, resp.HasMore, resp.ResponseMetaData.NextCursor
			}
		}
		if err != nil {
			return nil, fmt.Errorf("look for a reply sent before: %w", err)
		}
		note(msgs)
		if !more || next == "" {
			return found, nil
		}
		cursor = next
	}
	return found, nil
}

// isTS reports whether s is a Slack message ts ("1700000000.000100").
func isTS(s string) bool {
	sec, frac, ok := strings.Cut(s, ".")
	if !ok || sec == "" || frac == "" {
		return false
	}
	_, err1 := strconv.ParseUint(sec, 10, 64)
	_, err2 := strconv.ParseUint(frac, 10, 64)
	return err1 == nil && err2 == nil
}
