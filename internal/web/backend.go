package web

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/subagent"
)

// Backend is what the Control UI reads and changes. cmd/reef implements it with the code
// paths the CLI uses (the store, the Timer, the pairing and doctor logic), so a page and its
// command always agree. Every string it returns is shown escaped; none may hold a secret.
type Backend interface {
	Overview(ctx context.Context) (Overview, error)
	// Sessions lists the stored sessions whose key, channel or agent contains query ("" = all),
	// newest first, sub-agents below their parent.
	Sessions(ctx context.Context, query string) ([]SessionRow, error)
	// Conversation is one session's whole transcript; ErrNotFound when key names none.
	Conversation(ctx context.Context, key string) (Conversation, error)
	// Export writes the session's transcript as "jsonl" or "md".
	Export(ctx context.Context, key, format string, w io.Writer) error
	CronJobs(ctx context.Context) ([]schedule.Job, error)
	// Cron runs, enables, disables or removes a job (action run|enable|disable|remove).
	Cron(ctx context.Context, action, id string) error
	Pairings(ctx context.Context) ([]access.Pairing, error)
	// Pairing approves or denies a pending request (action approve|deny).
	Pairing(ctx context.Context, action, channel, code string) error
	// Config is the effective configuration with every secret redacted, and the doctor's checks.
	Config(ctx context.Context) (ConfigView, error)
	// ProbeProviders asks every configured provider, at once and briefly, whether it answers
	// and takes its key (reef doctor's check), in name order. It waits for the answers.
	ProbeProviders(ctx context.Context) ([]ProviderProbe, error)
}

// Overview is the first page.
type Overview struct {
	Version      string
	Started      time.Time
	Channels     []ChannelRow
	LiveSessions int
	Sessions     int
	DeadLetters  int
	// TokensToday are today's tokens per agent (the daily budget's count).
	TokensToday map[string]int
	// Reload is the last configuration reload's outcome (nil: none since the start).
	Reload *ReloadOutcome
}

// ReloadOutcome is what the last reload of reef.yaml did: applied changes, or why it was
// refused (the gateway keeps its configuration), and what waits for a restart.
type ReloadOutcome struct {
	At              time.Time
	Source, Refused string
	Applied         []string
	Restart         []string
}

// ChannelRow is one channel account's health.
type ChannelRow struct {
	Name        string
	Connected   bool
	State       string // "connected", "reconnecting (since 10:04:05, next try in 8s)", "failed"...
	LastMessage time.Time
	Restarts    int
	Reason      string // why it is not connected, in plain words
}

// SessionRow is one line of the sessions list.
type SessionRow struct {
	persistence.SessionInfo
	Live   bool
	Parent string // the spawning session, for a sub-agent
	// Title is the conversation's first user line; Preview its last message's (both cut).
	Title, Preview string
	// Cost is the session's tokens at its model's configured price; Priced is false without one.
	Cost   float64
	Priced bool
}

// Conversation is a whole stored session.
type Conversation struct {
	Info      persistence.SessionInfo
	Live      bool
	Entries   []persistence.Entry
	Snapshots []persistence.Snapshot
	Parent    *subagent.Link
	Children  []subagent.Link
	// Shown are the command exchanges the person saw, which the transcript does not hold
	// (persistence.ShownBucket), oldest first.
	Shown []persistence.Shown
}

// ConfigView is the Config page.
type ConfigView struct {
	YAML   string  // the effective configuration, secrets redacted
	Checks []Check // the doctor's checks that make sense while the gateway runs
	// Probes are the providers' answers when the page shows "check providers"'s result
	// (Probed); the page itself does not wait on the network.
	Probes []ProviderProbe
	Probed bool
}

// ProviderProbe is one provider's answer to "check providers" on the Config page.
type ProviderProbe struct {
	Name    string
	Type    string // openai, anthropic, gemini
	BaseURL string // "" for the type's default endpoint
	// State is "reachable", "auth refused" (the key was rejected), "unreachable" (no answer,
	// or an error answer), "not checked" (the client has no cheap check) or "misconfigured".
	State   string
	OK      bool
	Reason  string // why not reachable, secrets redacted
	Latency time.Duration
}

// Check is one doctor line.
type Check struct {
	OK      bool
	What    string
	Detail  string
	Fix     string
	Warning bool // a note, not a failure
}

// Errors a Backend wraps so that the page answers 4xx: ErrNotFound (404) when a key or id
// names nothing, ErrBadInput (400) when the request cannot be done as asked.
var (
	ErrNotFound = errors.New("not found")
	ErrBadInput = errors.New("bad input")
)
