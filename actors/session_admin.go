package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The owner's session actions from outside a chat (the Control UI's Sessions page): reset,
// as /reset does (a live Session resets itself, stopping its run first; a stored one gets
// the reset snapshot in the store), and delete, of a session not in memory.

// Session admin actions (Runtime.SessionAdmin).
const (
	SessionReset  = "reset"
	SessionDelete = "delete"
)

var (
	// ErrSessionLive refuses to delete a session that is in memory (it may be running).
	ErrSessionLive = errors.New("the session is active: /stop it and wait until it is unloaded (session.idleMinutes), or reset it")
	// ErrNoSession names no stored session.
	ErrNoSession = errors.New("no such session")
)

// sessionAdmin asks the Router to reset or delete a session.
type sessionAdmin struct {
	key, action string
	reply       chan<- error
}

// adminReset asks a live Session to reset itself as /reset does, silently (no chat is told).
type adminReset struct{ reply chan<- error }

// SessionAdmin resets or deletes the session key (action SessionReset or SessionDelete).
func (rt *Runtime) SessionAdmin(ctx context.Context, key, action string) error {
	if action != SessionReset && action != SessionDelete {
		return fmt.Errorf("unknown session action %q: use reset or delete", action)
	}
	reply := make(chan error, 1)
	rt.system.Root.Send(rt.router, &sessionAdmin{key: key, action: action, reply: reply})
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("session %s: %w", key, ctx.Err())
	}
}

// onSessionAdmin resets a live Session through itself, and changes a stored one in the
// store, in the Router's order: a message routed after this one loads the result.
func (r *Router) onSessionAdmin(ctx actor.Context, msg *sessionAdmin) {
	if rt := r.sessions[msg.key]; rt != nil {
		if msg.action == SessionDelete {
			msg.reply <- ErrSessionLive
			return
		}
		ctx.Send(rt.pid, &adminReset{reply: msg.reply})
		return
	}
	key, action, now := msg.key, msg.action, r.deps.now()
	ctx.Send(r.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error {
			info, ok, err := tx.Session(key)
			switch {
			case err != nil:
				return err
			case !ok:
				return ErrNoSession
			case action == SessionDelete:
				return tx.DeleteSession(key)
			}
			seqs, err := tx.AppendMessages(key, messages.ChatMessage{Role: messages.RoleSystem, Time: now,
				Content: "The user started a new session (/reset)."})
			if err != nil {
				return err
			}
			if err := tx.PutSnapshot(key, persistence.Snapshot{Seq: seqs[0], Created: now, Kind: persistence.SnapshotReset}); err != nil {
				return err
			}
			info.Fresh, info.Started, info.Updated = true, now, now
			return tx.PutSession(info)
		},
		Done: func(err error) { msg.reply <- err },
	})
}

// onAdminReset resets the Session as /reset does, without a chat to answer.
func (s *Session) onAdminReset(ctx actor.Context, msg *adminReset) {
	s.reset(ctx, messages.Inbound{SessionKey: s.key, Text: "/reset"}, command{name: "reset"})
	msg.reply <- nil
}
