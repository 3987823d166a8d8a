package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// A message that makes the Session itself panic (a bug in reef, not a failing tool or
// model: those are contained in the Turn) would otherwise crash it on every restart, since
// the message stays in the inbox. So a panic in Session.Receive charges the messages it was
// handling with an attempt, durably, before the Router restarts the Session; a message
// charged maxAttempts times is set aside as a dead letter, and its sender is told.

const (
	poisonBucket     = "poison"     // "<session key>#<20-digit inbox seq>" → attempts
	deadLetterBucket = "deadletter" // "<session key>#<20-digit inbox seq>" → the Inbound as JSON
	maxAttempts      = 2
)

func inboxRef(key string, seq uint64) string { return fmt.Sprintf("%s#%020d", key, seq) }

// chargeOnPanic is deferred by Receive: when Receive panics it records an attempt for every
// message in hand — the inbox entry being handled and those the run answers — and lets the
// panic go on to the Router's supervision. It blocks on Storage (only on this path), so
// the restarted Session reads the new counts.
func (s *Session) chargeOnPanic(ctx actor.Context, finished *bool) {
	if *finished {
		return
	}
	seqs := append([]uint64(nil), s.handling...)
	for _, in := range s.answering {
		seqs = append(seqs, in.InboxSeq)
	}
	key := s.key
	charged := map[uint64]bool{}
	apply := func(tx persistence.Tx) error {
		for _, seq := range seqs {
			if seq == 0 || charged[seq] {
				continue
			}
			charged[seq] = true
			ref := inboxRef(key, seq)
			v, _, err := tx.Get(poisonBucket, ref)
			if err != nil {
				return err
			}
			n := 0
			json.Unmarshal(v, &n)
			if err := tx.Put(poisonBucket, ref, []byte(fmt.Sprint(n+1))); err != nil {
				return err
			}
		}
		return nil
	}
	wait, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := writeAndWait(wait, ctx.ActorSystem().Root, s.storage, apply); err != nil {
		s.log.Error().Err(err).Str("session", s.key).Msg("could not count the attempt of a message that crashed the session")
	}
}

// loadAttempts reads how often each inbox entry of the session crashed it.
func loadAttempts(r persistence.Reader, key string) (map[uint64]int, error) {
	var out map[uint64]int
	err := r.Scan(poisonBucket, key+"#", func(k string, v []byte) error {
		var seq uint64
		var n int
		if _, err := fmt.Sscanf(k[len(key)+1:], "%d", &seq); err != nil {
			return nil
		}
		json.Unmarshal(v, &n)
		if out == nil {
			out = map[uint64]int{}
		}
		out[seq] = n
		return nil
	})
	return out, err
}

// deadLetter sets aside inbox entries that crashed the session maxAttempts times: they move
// to the dead-letter bucket, the last sender is told, and the session goes on.
func (s *Session) deadLetter(ctx actor.Context, dead []persistence.InboxItem) {
	key := s.key
	for _, it := range dead {
		s.log.Error().Str("session", key).Uint64("inboxSeq", it.Seq).Int("attempts", s.attempts[it.Seq]).
			Msg("message set aside as a dead letter: it crashed the session every time")
		s.queue.discard = append(s.queue.discard, it.Seq)
	}
	last := dead[len(dead)-1].Inbound
	last.InboxSeq = 0 // its seq is in s.queue.discard with the others
	s.answer(ctx, last, "Sorry, I could not handle that message: it made me fail twice, so I set it aside for the operator. "+
		"Please try again in other words.", func(tx persistence.Tx) error {
		for _, it := range dead {
			b, err := json.Marshal(it.Inbound)
			if err != nil {
				return err
			}
			ref := inboxRef(key, it.Seq)
			if err := tx.Put(deadLetterBucket, ref, b); err != nil {
				return err
			}
			if err := tx.Delete(poisonBucket, ref); err != nil {
				return err
			}
		}
		return nil
	})
}

// clearAttempts removes the attempt counts of answered inbox entries (inside their write).
func clearAttempts(tx persistence.Tx, key string, attempts map[uint64]int, seqs []uint64) error {
	for _, seq := range seqs {
		if _, ok := attempts[seq]; ok {
			if err := tx.Delete(poisonBucket, inboxRef(key, seq)); err != nil {
				return err
			}
		}
	}
	return nil
}

// DeadLetter is a message set aside because it crashed its session every time.
type DeadLetter struct {
	SessionKey string           `json:"sessionKey"`
	InboxSeq   uint64           `json:"inboxSeq"`
	Inbound    messages.Inbound `json:"inbound"`
}

// ListDeadLetters returns the dead letters in the store, by session key and seq.
func ListDeadLetters(r persistence.Reader) ([]DeadLetter, error) {
	var out []DeadLetter
	err := r.Scan(deadLetterBucket, "", func(k string, v []byte) error {
		i := strings.LastIndexByte(k, '#')
		if i < 0 {
			return nil
		}
		d := DeadLetter{SessionKey: k[:i]}
		fmt.Sscanf(k[i+1:], "%d", &d.InboxSeq)
		if err := json.Unmarshal(v, &d.Inbound); err != nil {
			return fmt.Errorf("dead letter %s: %w", k, err)
		}
		out = append(out, d)
		return nil
	})
	return out, err
}
