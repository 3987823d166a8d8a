package persistence

// Record is one stored row as a store keeps it, for copying a whole store into another
// (`reef migrate`): seqs and the values' bytes are kept as they are, so a session continues
// in the copy with the seqs it had.
type Record struct {
	Kind RecordKind
	// Key is the session key (sessions and their rows), the dedup id, or the key in Bucket.
	Key    string
	Bucket string // RecordKV: the named bucket's path ("cron/jobs")
	Seq    uint64 // RecordMessage, RecordSnapshot, RecordInbox, RecordOutbox
	// Value is the stored JSON (RecordSession: the info, nil when the session has none),
	// the kv value, or nil.
	Value []byte
	// Seqs are a session's counters (RecordSession): the last seq handed out of each kind,
	// which may be past the last row still stored (deleted inbox and outbox rows).
	Seqs SessionSeqs
	At   int64 // RecordDedup: unix nanos of the first sighting
}

// SessionSeqs are the last seqs a session handed out.
type SessionSeqs struct{ Messages, Inbox, Outbox uint64 }

// RecordKind says what a Record holds.
type RecordKind string

// The kinds of Record. A session's RecordSession comes before its other rows.
const (
	RecordSession  RecordKind = "session"
	RecordMessage  RecordKind = "message"
	RecordSnapshot RecordKind = "snapshot"
	RecordInbox    RecordKind = "inbox"
	RecordOutbox   RecordKind = "outbox"
	RecordDedup    RecordKind = "dedup"
	RecordKV       RecordKind = "kv"
)
