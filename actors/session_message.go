package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
)

// The message tool sends a message to the conversation while its run goes on. The message
// is recorded in the outbox before it is delivered, like a reply, and a final reply that
// only repeats it is not delivered again.

type (
	// toolMessage asks a session to send text now; reply gets the outcome once.
	toolMessage struct {
		key   string
		req   tools.MessageRequest
		reply chan error      // buffered
		ids   chan sentResult // buffered; nil: the sender does not wait for the platform ids
	}
	// toolMessageRecorded reports that a tool message is durable in the outbox.
	toolMessageRecorded struct {
		by    *Session // see turnRecorded
		out   *messages.Outbound
		err   error
		reply chan error
		ids   chan sentResult
	}
)

// idsWait bounds how long a message tool send waits for the platform to report the id of
// what it sent (the message is durable and goes out regardless).
const idsWait = 20 * time.Second

// Message implements tools.Runtime.
func (r *toolsRuntime) Message(ctx context.Context, sessionKey, text string) error {
	_, err := r.sendMessage(ctx, sessionKey, tools.MessageRequest{Text: text}, false)
	return err
}

// SendMessage implements tools.Messenger.
func (r *toolsRuntime) SendMessage(ctx context.Context, sessionKey string, req tools.MessageRequest) (tools.MessageResult, error) {
	return r.sendMessage(ctx, sessionKey, req, !req.React)
}

// sendMessage hands req to the session and waits for its answer, then, with wantIDs, for the ids
// of the platform messages (for a send: once the Connector delivered it; for an edit or a
// delete they come with the answer).
func (r *toolsRuntime) sendMessage(ctx context.Context, sessionKey string, req tools.MessageRequest, wantIDs bool) (tools.MessageResult, error) {
	reply := make(chan error, 1)
	var ids chan sentResult
	if wantIDs {
		ids = make(chan sentResult, 1)
	}
	r.root.Send(r.router, &toolMessage{key: sessionKey, req: req, reply: reply, ids: ids})
	select {
	case err := <-reply:
		if err != nil || ids == nil {
			return tools.MessageResult{}, err
		}
	case <-ctx.Done():
		return tools.MessageResult{}, fmt.Errorf("message: %w", ctx.Err())
	}
	wait := time.NewTimer(idsWait)
	defer wait.Stop()
	select {
	case got := <-ids:
		if got.err != nil {
			return tools.MessageResult{}, fmt.Errorf("the message was not delivered: %w", got.err)
		}
		return tools.MessageResult{MessageIDs: got.ids}, nil
	case <-wait.C:
	case <-ctx.Done():
	}
	return tools.MessageResult{}, nil
}

// onToolMessage records the message in the outbox for the chat the run answers.
func (s *Session) onToolMessage(ctx actor.Context, msg *toolMessage) {
	if s.turn == nil || len(s.answering) == 0 || s.answering[len(s.answering)-1].Channel == "" {
		msg.reply <- errors.New("there is no conversation to send to (this run's reply is not delivered)")
		return
	}
	last := s.answering[len(s.answering)-1]
	if msg.req.React {
		s.react(ctx, last, msg)
		return
	}
	if msg.req.Edit || msg.req.Delete {
		s.changeMessage(ctx, last, msg) // session_edit.go
		return
	}
	text := s.deps.redactor().apply(msg.req.Text)
	out, err := s.toolMessageOutbound(last, msg.req)
	if err != nil {
		msg.reply <- err
		return
	}
	out.Text = text
	for _, ref := range msg.req.Media { // checked by the tool; confined again here (internal/media)
		m, err := media.Outbound(s.agent.Workspace, ref)
		if err == nil {
			err = s.confineMedia(m)
		}
		if err != nil {
			msg.reply <- fmt.Errorf("media not sent: %w", err)
			return
		}
		out.Media = append(out.Media, m)
	}
	if !out.Direct && text != "" {
		s.toolSent = append(s.toolSent, normalizeReply(text))
	}
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			seq, err := tx.AppendOutbox(key, *out)
			out.OutboxSeq = seq
			return err
		},
		Done: func(err error) {
			root.Send(self, &toolMessageRecorded{by: s, out: out, err: err, reply: msg.reply, ids: msg.ids})
		},
	})
}

func (s *Session) onToolMessageRecorded(ctx actor.Context, msg *toolMessageRecorded) {
	if msg.by != s { // the restarted Session sends what its outbox holds itself
		msg.reply <- errors.New("the conversation restarted; the message is sent with its pending replies")
		return
	}
	if msg.err != nil {
		msg.reply <- fmt.Errorf("message not sent: %w", msg.err)
		return
	}
	s.toConnector(ctx, msg.out)
	if msg.ids != nil {
		s.askSentIDs(ctx, msg.out, msg.ids) // session_edit.go
	}
	msg.reply <- nil
}

// repeatsToolMessage reports whether a final reply only repeats a message the run already
// sent with the message tool.
func (s *Session) repeatsToolMessage(text string) bool {
	n := normalizeReply(text)
	for _, sent := range s.toolSent {
		if n == sent {
			return true
		}
	}
	return false
}

func normalizeReply(text string) string {
	return strings.ToLower(strings.Join(strings.Fields(text), " "))
}
