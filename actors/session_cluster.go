package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// inboxChanged: Router → Session, in cluster mode: entries may have landed in the session's
// inbox from another node (a notification, or the sweep found some); the Session reads its
// inbox and takes the entries it has not taken yet.
type inboxChanged struct{}

// tookMax bounds Session.took; past it the lower half is forgotten (those entries were
// routed long ago).
const tookMax = 1024

// onInboxChanged takes the inbox entries above what the Session loaded at start that it has
// not taken yet, in seq order, as if they had been routed to it.
func (s *Session) onInboxChanged(ctx actor.Context) error {
	var inbox []persistence.InboxItem
	err := s.deps.Store.View(func(r persistence.Reader) error {
		var err error
		inbox, err = r.Inbox(s.key)
		return err
	})
	if err != nil {
		return fmt.Errorf("session: read inbox: %w", err)
	}
	for _, it := range inbox {
		in := it.Inbound
		in.InboxSeq, in.SessionKey = it.Seq, s.key
		if in.InboxSeq > s.loadedInbox && !s.took[in.InboxSeq] {
			s.onInbound(ctx, &in)
		}
	}
	return nil
}

// tookAlready reports whether the Session has taken in before (cluster mode), and notes it
// taken otherwise: one loaded at start, or one taken since, routed or read again.
func (s *Session) tookAlready(in *messages.Inbound) bool {
	if in.InboxSeq == 0 {
		return false
	}
	if in.InboxSeq <= s.loadedInbox || s.took[in.InboxSeq] {
		return true
	}
	if s.took == nil {
		s.took = map[uint64]bool{}
	}
	if len(s.took) >= tookMax {
		low := s.loadedInbox
		for seq := range s.took {
			low = max(low, seq)
		}
		cut := s.loadedInbox + (low-s.loadedInbox)/2
		for seq := range s.took {
			if seq <= cut {
				delete(s.took, seq)
			}
		}
		s.loadedInbox = cut // everything at or below was taken long ago
	}
	s.took[in.InboxSeq] = true
	return false
}
