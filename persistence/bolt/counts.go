package bolt

import (
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// Counts are the sizes /metrics reports of the store.
type Counts struct {
	Sessions int // stored sessions (session buckets)
	Inbox    int // inbox rows: messages accepted and not yet answered
	Outbox   int // outbox rows: replies not yet confirmed sent
}

// Counts counts sessions, inbox and outbox rows in one read transaction: one pass over the
// sessions, opening each one's inbox and outbox. began, when not nil, is called once the
// transaction has begun: the counts are of the state of the last commit before that.
func (s *Store) Counts(began func()) (Counts, error) {
	var c Counts
	err := s.db.View(func(btx *bbolt.Tx) error {
		if began != nil {
			began()
		}
		sessions := btx.Bucket(bucketSessions)
		cur := sessions.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if v != nil {
				continue
			}
			c.Sessions++
			sb := sessions.Bucket(k)
			c.Inbox += keys(sb.Bucket(bucketInbox))
			c.Outbox += keys(sb.Bucket(bucketOutbox))
		}
		return nil
	})
	if err != nil {
		return Counts{}, fmt.Errorf("bolt: counts: %w", mapErr(err))
	}
	return c, nil
}

// SessionCount counts the stored sessions (a cursor over the sessions' names only).
func (s *Store) SessionCount() (int, error) {
	n := 0
	err := s.db.View(func(btx *bbolt.Tx) error {
		cur := btx.Bucket(bucketSessions).Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if v == nil {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("bolt: session count: %w", mapErr(err))
	}
	return n, nil
}

func keys(b *bbolt.Bucket) int {
	if b == nil {
		return 0
	}
	n := 0
	cur := b.Cursor()
	for k, _ := cur.First(); k != nil; k, _ = cur.Next() {
		n++
	}
	return n
}
