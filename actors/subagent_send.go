package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/sessionkey"
	"github.com/reefgw/reef/subagent"
	"github.com/reefgw/reef/tools"
)

// sessions_send: a message from one session's run to another session of the gateway. It is
// put in the receiver's inbox as a System event (source "session:<sender>"), so its run sees
// an inter-session message, not its user, gets no more tools than the sender's run, and sends
// its answer to no chat. A sender that waits registers with the Router under a reply id
// carried in the event's source; the receiver's run that answers it sends the answer back
// once the run is recorded.

// defaultSendWait is how long sessions_send waits for the reply when timeoutSeconds is unset.
const defaultSendWait = 60 * time.Second

type (
	// sendRequest is sessions_send's call, resolved to a session key, for the sender's Session.
	sendRequest struct {
		to, replyID, text string
	}
	// awaitReply registers a waiting sender with the Router; forgetReply drops it.
	awaitReply struct {
		id    string
		reply chan string // buffered
	}
	forgetReply struct{ id string }
	// interReply is a receiver's answer to a waiting sender (the session to, when known).
	interReply struct{ id, text, to string }
)

// replyMark separates the sender's key from the reply id in an inter-session event's source.
const replyMark = "|reply:"

// replySource is the Source of the inbox entry that carries a reply to a sender that waits,
// in cluster mode, where it may wait on another node (putReplies).
const replySource = "session-reply:"

// send resolves the receiver, has the sender's Session store and route the message, and
// waits for the reply unless timeoutSeconds is 0.
func (r *toolsRuntime) send(ctx context.Context, env tools.Env, a *subagent.SendArgs) (json.RawMessage, error) {
	to, child, err := r.resolveReceiver(env.SessionKey, a)
	if err != nil {
		return nil, err
	}
	wait := defaultSendWait
	if child != nil && child.Persistent() {
		wait = 0 // more work for the sender's own sub-agent: push-based, like sessions_spawn
	}
	if a.TimeoutSeconds != nil {
		wait = time.Duration(*a.TimeoutSeconds) * time.Second
	}
	req := &sendRequest{to: to, text: a.Message}
	var reply chan string
	if wait > 0 {
		req.replyID, reply = subagent.NewID(), make(chan string, 1)
		r.root.Send(r.router, &awaitReply{id: req.replyID, reply: reply})
		defer r.root.Send(r.router, &forgetReply{id: req.replyID})
	}
	if _, err := r.call(ctx, env, subagent.ToolSend, req); err != nil {
		return nil, err
	}
	if wait == 0 {
		if child != nil && child.Persistent() {
			return json.Marshal(map[string]any{"status": "sent", "sessionKey": to, "note": "a new run of your sub-agent " +
				child.Name() + ": its result arrives in this conversation as a completion event. Do not poll; call sessions_yield to wait."})
		}
		return json.Marshal(map[string]any{"status": "sent", "sessionKey": to})
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case text := <-reply:
		return json.Marshal(map[string]any{"status": "ok", "sessionKey": to, "reply": text})
	case <-t.C:
		return json.Marshal(map[string]any{"status": "timeout", "sessionKey": to,
			"note": fmt.Sprintf("no reply within %s; the message was delivered and is answered later (not to you)", wait)})
	case <-ctx.Done():
		return nil, fmt.Errorf("sessions_send: %w", ctx.Err())
	}
}

// resolveReceiver finds the key a send names: an existing session, or one of the sender's
// sub-agents by label; child is the receiver's link when it is one of the sender's sub-agents.
func (r *toolsRuntime) resolveReceiver(from string, a *subagent.SendArgs) (key string, child *subagent.Link, err error) {
	err = r.store.View(func(rd persistence.Reader) error {
		children, err := subagent.Children(rd, from)
		if err != nil {
			return err
		}
		for i, l := range children {
			if l.Child == a.SessionKey || a.SessionKey == "" && strings.EqualFold(l.Label, a.Label) {
				key, child = l.Child, &children[i]
			}
		}
		if child != nil && !child.Archived.IsZero() {
			return fmt.Errorf("the sub-agent %s was archived (%s): spawn a new one", child.Name(), child.Archived.UTC().Format(time.RFC3339))
		}
		if a.SessionKey != "" {
			_, ok, err := rd.Session(a.SessionKey)
			if err == nil && !ok {
				err = fmt.Errorf("no session %q (sessions_list shows the keys)", a.SessionKey)
			}
			key = a.SessionKey
			return err
		}
		if key == "" {
			return fmt.Errorf("no sub-agent of this session is labelled %q", a.Label)
		}
		return nil
	})
	switch {
	case err != nil:
		return "", nil, err
	case key == from:
		return "", nil, errors.New("that is this session; answer yourself")
	}
	return key, child, nil
}

// onSendRequest stores the inter-session event in the receiver's inbox and routes it.
func (s *Session) onSendRequest(ctx actor.Context, call *sessionsCall) {
	req := call.args.(*sendRequest)
	source := subagent.FollowUpSource(s.key)
	if req.replyID != "" {
		source += replyMark + req.replyID
	}
	in := messages.Inbound{System: true, Source: source, SessionKey: req.to, Time: s.deps.now(),
		Text: "[Inter-session message from session " + s.key + " (agent " + s.agent.ID + "), not from your user. " +
			"Your answer goes back to that session, not to any chat.]\n" + s.deps.redactor().apply(req.text),
		Standing: &messages.Standing{Tools: s.turnTools.Allowed(), Owner: s.turnReach.Owner}}
	done := func(err error) {
		if err != nil {
			err = fmt.Errorf("sessions_send: could not store the message: %w", err)
		}
		call.answer(map[string]any{"status": "stored"}, err)
	}
	if found, _ := s.findChildren(req.to, false); req.replyID == "" && len(found) == 1 && found[0].Child == req.to && found[0].Addressable() {
		s.sendFollowUp(ctx, found[0], in, done) // more work for a child of mode session: a run, a completion
		return
	}
	s.sendInternal(ctx, req.to, in, done)
}

// interReplies are the answers of a finished run to the senders waiting for it.
func (s *Session) interReplies(msg *turnFinished) []interReply {
	var out []interReply
	for _, in := range s.answering {
		from, id, ok := strings.Cut(in.Source, replyMark)
		if !ok || !in.System {
			continue
		}
		text := s.deps.redactor().apply(msg.reply)
		switch {
		case msg.err != nil && !msg.cancelled:
			text = "(the receiving session's run failed)"
		case msg.cancelled:
			text = "(the receiving session's run was stopped)"
		case agent.IsSilent(text):
			text = ""
		}
		out = append(out, interReply{id: id, text: capBytes(text, subagent.MaxAnswer), to: strings.TrimPrefix(from, subagent.FollowUpSource(""))})
	}
	return out
}

// putReplies puts the replies in the inboxes of the sessions that sent them, in the run's
// transaction, in cluster mode: a sender waits in the Router of the node that runs it, which
// may be another node than this one. That node's Session hands the reply to its Router
// (takeHandover); this node's Router gets it too (onSubagentRecorded), and whichever holds the
// waiter answers it, once. A stateless session runs on the node of its request: not stored.
func (e *subagentEnding) putReplies(tx persistence.Tx) error {
	if !e.shared {
		return nil
	}
	for _, r := range e.replies {
		if r.to == "" || sessionkey.IsStateless(r.to) {
			continue
		}
		in := messages.Inbound{System: true, Source: replySource + r.id, SessionKey: r.to, Time: e.now, Text: r.text}
		if _, err := tx.AppendInbox(r.to, in); err != nil {
			return err
		}
	}
	return nil
}

// Router side: the waiting senders.
func (r *Router) onAwaitReply(msg *awaitReply) {
	if r.replies == nil {
		r.replies = map[string]chan string{}
	}
	r.replies[msg.id] = msg.reply
}

func (r *Router) onInterReply(msg *interReply) {
	if ch := r.replies[msg.id]; ch != nil {
		ch <- msg.text
		delete(r.replies, msg.id)
	}
}
