package bolt

import (
	"bytes"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"github.com/reefgw/reef/persistence"
)

// Export calls fn with every record of the database, from one read transaction: each
// session (with its seq counters) followed by its entries, snapshots, inbox and outbox rows,
// then the dedup ids, then every named bucket's keys. Values are copies. An error from fn
// stops the walk and is returned.
func (s *Store) Export(fn func(persistence.Record) error) error {
	err := s.db.View(func(btx *bbolt.Tx) error {
		sessions := btx.Bucket(bucketSessions)
		err := sessions.ForEach(func(k, v []byte) error {
			if v != nil {
				return nil
			}
			return exportSession(sessions.Bucket(k), string(k), fn)
		})
		if err != nil {
			return err
		}
		err = btx.Bucket(bucketDedup).ForEach(func(k, v []byte) error {
			return fn(persistence.Record{Kind: persistence.RecordDedup, Key: string(k), At: dedupTime(v)})
		})
		if err != nil {
			return err
		}
		return btx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if bytes.Equal(name, bucketMeta) || bytes.Equal(name, bucketSessions) || bytes.Equal(name, bucketDedup) {
				return nil
			}
			return exportBucket(b, string(name), fn)
		})
	})
	if err != nil {
		return fmt.Errorf("bolt: export: %w", mapErr(err))
	}
	return nil
}

// exportSession sends one session's record and rows.
func exportSession(sb *bbolt.Bucket, key string, fn func(persistence.Record) error) error {
	seq := func(name []byte) uint64 {
		if b := sb.Bucket(name); b != nil {
			return b.Sequence()
		}
		return 0
	}
	rec := persistence.Record{Kind: persistence.RecordSession, Key: key,
		Seqs: persistence.SessionSeqs{Messages: seq(bucketMsgs), Inbox: seq(bucketInbox), Outbox: seq(bucketOutbox)}}
	if v := sb.Get(keyInfo); v != nil {
		rec.Value = bytes.Clone(v)
	}
	if err := fn(rec); err != nil {
		return err
	}
	for _, sub := range []struct {
		name []byte
		kind persistence.RecordKind
	}{
		{bucketMsgs, persistence.RecordMessage}, {bucketSnaps, persistence.RecordSnapshot},
		{bucketInbox, persistence.RecordInbox}, {bucketOutbox, persistence.RecordOutbox},
	} {
		b := sb.Bucket(sub.name)
		if b == nil {
			continue
		}
		err := b.ForEach(func(k, v []byte) error {
			if v == nil || len(k) != 8 {
				return nil
			}
			return fn(persistence.Record{Kind: sub.kind, Key: key, Seq: btoi(k), Value: bytes.Clone(v)})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// exportBucket sends a named bucket's keys, then its nested buckets' as path/name.
func exportBucket(b *bbolt.Bucket, path string, fn func(persistence.Record) error) error {
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			return exportBucket(b.Bucket(k), path+"/"+string(k), fn)
		}
		return fn(persistence.Record{Kind: persistence.RecordKV, Bucket: path, Key: string(k), Value: bytes.Clone(v)})
	})
}
