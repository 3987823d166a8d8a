// Package persistence defines reef's durable state: the Store interface and the records it
// holds (session info, transcript entries, compaction snapshots, inbox, outbox, dedup marks).
// bolt implements it on one bbolt file; memory implements it in process for tests.
//
// Writes happen only inside Update, which commits (and, for bolt, fsyncs) before it returns.
// In reef the Storage actor is the caller of Update for conversations, pairing and cron, and
// batches many requests into one call (group commit); the memory index (package memory)
// writes its own memory/<agent>/ buckets with Update directly. Readers call View directly.
package persistence

import (
	"errors"
	"time"

	"github.com/reefgw/reef/messages"
)

// Store is reef's durable state.
type Store interface {
	// Update runs fn in one read-write transaction and commits it durably. If fn returns an
	// error nothing fn wrote is kept.
	Update(fn func(Tx) error) error
	// View runs fn in a read-only transaction that sees a consistent snapshot.
	View(fn func(Reader) error) error
	Close() error
}

// Reader reads state. Methods return empty results (not errors) for unknown sessions.
type Reader interface {
	// Session returns the info of a session and whether it exists.
	Session(key string) (SessionInfo, bool, error)
	// Sessions lists every session's info, ordered by key.
	Sessions() ([]SessionInfo, error)
	// Messages returns transcript entries with seq > after, in order.
	Messages(key string, after uint64) ([]Entry, error)
	// LatestSnapshot returns the newest compaction snapshot and whether one exists.
	// Loading a session = LatestSnapshot + Messages(key, snap.Seq).
	LatestSnapshot(key string) (Snapshot, bool, error)
	// Snapshots returns every snapshot of a session, ordered by Seq (exports use them to mark
	// where each summary or reset falls in the full transcript).
	Snapshots(key string) ([]Snapshot, error)
	// Inbox returns accepted inbound messages not yet answered, in order.
	Inbox(key string) ([]InboxItem, error)
	// Outbox returns replies not yet confirmed sent, in order.
	Outbox(key string) ([]OutboxItem, error)
	// PendingSessions lists the keys of sessions with a non-empty inbox or outbox (recovery after a crash).
	PendingSessions() ([]string, error)
	// Seen reports whether a dedup id was recorded.
	Seen(id string) (bool, error)
	// Get returns the value under key in a named bucket ("pairing", "cron/jobs": a path of
	// names separated by "/") and whether it exists. Other packages keep their own records
	// this way (pairing codes, cron jobs) without growing this interface.
	Get(bucket, key string) ([]byte, bool, error)
	// Scan calls fn for every key with prefix in bucket, in byte order of the keys. An error
	// from fn stops the scan and is returned. fn must not keep value after it returns.
	Scan(bucket, prefix string, fn func(key string, value []byte) error) error
}

// Tx reads and writes state inside Update.
type Tx interface {
	Reader
	// PutSession creates or replaces a session's info.
	PutSession(info SessionInfo) error
	// AppendMessages appends transcript entries and returns the seq given to each.
	AppendMessages(key string, msgs ...messages.ChatMessage) ([]uint64, error)
	// PutSnapshot stores a compaction summary covering every entry with seq <= snap.Seq.
	PutSnapshot(key string, snap Snapshot) error
	// AppendInbox stores an accepted inbound message and returns its seq.
	AppendInbox(key string, in messages.Inbound) (uint64, error)
	// DeleteInbox removes an inbox entry once its turn is recorded.
	DeleteInbox(key string, seq uint64) error
	// AppendOutbox stores a reply to send and returns its seq.
	AppendOutbox(key string, out messages.Outbound) (uint64, error)
	// DeleteOutbox removes an outbox entry once the platform confirmed it.
	DeleteOutbox(key string, seq uint64) error
	// MarkSeen records a dedup id; it reports false if the id was already recorded.
	MarkSeen(id string, at time.Time) (bool, error)
	// PruneSeen removes dedup ids first seen before cutoff, looking at no more than limit ids
	// (all when limit <= 0) from id from on, in id order, so that one transaction stays short.
	// It returns how many it removed and the id to continue from ("" when it looked at all).
	PruneSeen(cutoff time.Time, from string, limit int) (removed int, next string, err error)
	// DeleteSession removes a session and everything under it.
	DeleteSession(key string) error
	// Put stores value under key in a named bucket, creating the bucket.
	Put(bucket, key string, value []byte) error
	// Delete removes key from a named bucket; a missing key is not an error.
	Delete(bucket, key string) error
}

// ReservedBuckets are names the stores use themselves; a named bucket path must not start
// with one of them.
var ReservedBuckets = []string{"meta", "sessions", "dedup"}

// SessionInfo is the summary record of one conversation.
type SessionInfo struct {
	Key      string `json:"key"`
	AgentID  string `json:"agentId"`
	Channel  string `json:"channel,omitempty"`
	Account  string `json:"account,omitempty"`
	ChatID   string `json:"chatId,omitempty"`
	ThreadID string `json:"threadId,omitempty"`
	Model    string `json:"model,omitempty"` // override of the agent's model, "" = default
	// Think is the reasoning effort set with /think ("", off, low, medium, high); "" = the provider's default.
	Think string `json:"think,omitempty"`
	// ShowReasoning, set with /reasoning on, sends the model's visible reasoning before its reply.
	ShowReasoning bool `json:"showReasoning,omitempty"`
	// Queue overrides how messages that arrive during a run are handled (/queue).
	Queue QueueSettings `json:"queue,omitzero"`
	// Started is when the current session began: the first message, or the last /new or /reset.
	Started time.Time `json:"started,omitzero"`
	// Fresh is set by /new and /reset: the next run opens with the session start routine.
	Fresh   bool      `json:"fresh,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// OwnerSeen is when a run last answered the owner here (zero: never). Cron jobs and
	// heartbeats run with the owner's tools only in a session the owner used, and the agent's
	// main session is the direct chat the owner used last, never a guest's.
	OwnerSeen time.Time      `json:"ownerSeen,omitzero"`
	Turns     int            `json:"turns,omitempty"`
	Usage     messages.Usage `json:"usage,omitzero"`
	// The daily token budget: input+output tokens used on BudgetDay (YYYY-MM-DD in the agent's
	// time zone), and whether the user was told on that day that the budget is used up.
	BudgetDay      string `json:"budgetDay,omitempty"`
	BudgetTokens   int    `json:"budgetTokens,omitempty"`
	BudgetNotified bool   `json:"budgetNotified,omitempty"`
}

// QueueSettings say what happens to messages that arrive while a run is active. Zero fields
// mean "inherit" (from the channel's setting, then the global one).
type QueueSettings struct {
	Mode     string `json:"mode,omitempty"`       // steer | followup | collect | interrupt
	Debounce int    `json:"debounceMs,omitempty"` // collect: quiet window in ms
	Cap      int    `json:"cap,omitempty"`        // most messages waiting
	Drop     string `json:"drop,omitempty"`       // summarize | old | new: what goes when the cap is hit
}

// Entry is one stored transcript entry.
type Entry struct {
	Seq uint64
	messages.ChatMessage
}

// Snapshot is a compaction summary that replaces every entry up to and including Seq.
type Snapshot struct {
	Seq     uint64    `json:"seq"`
	Summary string    `json:"summary"`
	Created time.Time `json:"created"`
	// Kind is "" for a compaction summary and SnapshotReset when the user started a new
	// session (/new, /reset): the model sees nothing up to Seq, and Summary is empty.
	Kind string `json:"kind,omitempty"`
}

// SnapshotReset is the Kind of a snapshot that marks a session reset.
const SnapshotReset = "reset"

// InboxItem is an accepted inbound message waiting for its turn.
type InboxItem struct {
	Seq uint64
	messages.Inbound
}

// OutboxItem is a reply waiting to be confirmed sent.
type OutboxItem struct {
	Seq uint64
	messages.Outbound
}

// ErrLocked is returned by Open functions when another process holds the database.
var ErrLocked = errors.New("database is in use by another reef process")
