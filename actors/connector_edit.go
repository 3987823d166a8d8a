package actors

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
)

// The message tool's edit and delete, and the ids of what its send delivered (session_edit.go).
// The Connector remembers, in memory, the platform ids of the messages it sent lately per
// chat; edit and delete act only on those, so a run can never change or remove a message
// someone else wrote (a bot that is a group admin could delete others' messages). After a
// restart the record is empty and such requests are refused with a clear error.

type messageOpKind int

const (
	opIDs    messageOpKind = iota // answer ids with the ids of the Outbound out, once sent
	opEdit                        // replace the text of messageID ("" = the last sent) with text
	opDelete                      // delete messageID ("" = the last sent)
)

// sentResult is what became of a message tool's send: the platform ids of what was
// delivered, or why the platform refused it.
type sentResult struct {
	ids []string
	err error
}

// messageOp is a message tool request the Connector runs in its chat's order.
type messageOp struct {
	kind      messageOpKind
	chatID    string
	messageID string
	text      string
	out       string          // opIDs: outKey of the Outbound
	reply     chan error      // opEdit, opDelete; buffered
	ids       chan sentResult // buffered; may be nil
}

// sentPerChat bounds the ids remembered per chat.
const sentPerChat = 64

// sentLog is the record of what the Connector sent. Its send goroutines write it, the
// message ops read it: a mutex guards it.
type sentLog struct {
	mu     sync.Mutex
	byChat map[string][]string // chat → ids, oldest first
	used   map[string]uint64   // chat → when it was last noted (a count), for forgetting idle chats
	clock  uint64
	byOut  map[string][]string // outKey → ids, until asked for (opIDs)
	failed map[string]error    // outKey → why the platform refused it, until asked for
}

// sentChats is how many chats the record keeps: past twice as many, the chats noted longest
// ago are forgotten (a soak of 5,000 chats grew the heap by a list per chat that was never
// used again).
const sentChats = 1024

// note records the ids of a sent Outbound.
func (l *sentLog) note(chat, out string, ids []string) {
	if len(ids) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byChat == nil {
		l.byChat, l.byOut, l.used = map[string][]string{}, map[string][]string{}, map[string]uint64{}
	}
	l.clock++
	l.used[chat] = l.clock
	if len(l.byChat) >= 2*sentChats {
		l.forgetIdle()
	}
	list := append(l.byChat[chat], ids...)
	if n := len(list); n > sentPerChat {
		list = append([]string(nil), list[n-sentPerChat:]...)
	}
	l.byChat[chat] = list
	if out != "" {
		if len(l.byOut) >= 1024 { // nobody asked for these: a bound, not a cache policy
			clear(l.byOut)
		}
		l.byOut[out] = append([]string(nil), ids...)
	}
}

// forgetIdle drops the chats noted longest ago, keeping sentChats; l.mu is held.
func (l *sentLog) forgetIdle() {
	cut := l.clock - sentChats // the sentChats chats noted last have a later count
	for chat, at := range l.used {
		if at <= cut {
			delete(l.byChat, chat)
			delete(l.used, chat)
		}
	}
}

// refused records that the platform refused an Outbound for good.
func (l *sentLog) refused(out string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil || len(l.failed) >= 1024 { // nobody asked for these: a bound
		l.failed = map[string]error{}
	}
	l.failed[out] = err
}

// take returns and forgets what became of an Outbound.
func (l *sentLog) take(out string) sentResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := sentResult{ids: l.byOut[out], err: l.failed[out]}
	delete(l.byOut, out)
	delete(l.failed, out)
	return r
}

// resolve finds a message the Connector sent in chat: id as sent, or its bare number for
// ids of the form "<chat>:<n>" (Telegram); "" is the last one sent.
func (l *sentLog) resolve(chat, id string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return findSent(l.byChat[chat], id)
}

// peek returns the ids of a sent Outbound without forgetting them.
func (l *sentLog) peek(out string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byOut[out]
}

// findSent is resolve on one chat's list.
func findSent(list []string, id string) (string, bool) {
	if id == "" {
		if len(list) == 0 {
			return "", false
		}
		return list[len(list)-1], true
	}
	for _, s := range list {
		if s == id || strings.HasSuffix(s, ":"+id) {
			return s, true
		}
	}
	return "", false
}

// forget removes a deleted message from the record.
func (l *sentLog) forget(chat, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.byChat[chat]
	for i, s := range list {
		if s == id {
			l.byChat[chat] = append(list[:i:i], list[i+1:]...)
			return
		}
	}
}

// onMessageOp queues op behind the chat's replies, so that it sees what was sent before it.
func (c *Connector) onMessageOp(ctx actor.Context, op *messageOp) {
	c.enqueue(ctx, op.chatID, op)
}

// runMessageOp runs op on the chat's send goroutine (Connector.next).
func (c *Connector) runMessageOp(ctx context.Context, root *actor.RootContext, op *messageOp) {
	if op.kind == opIDs {
		if op.ids != nil {
			op.ids <- c.sentIDs.take(op.out)
		}
		return
	}
	action, done := "edit", "edited"
	if op.kind == opDelete {
		action, done = "delete", "deleted"
	}
	id, ok := c.resolveSent(op.chatID, op.messageID) // connector_sent_cluster.go
	if !ok {
		if op.messageID == "" {
			op.reply <- fmt.Errorf("nothing to %s: reef has sent no message in this conversation since it started", action)
		} else {
			op.reply <- fmt.Errorf("message %q is not one reef sent in this conversation lately: only those can be %s", op.messageID, done)
		}
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, reactTimeout)
	defer cancel()
	var err error
	e, canEdit := c.ch.(channels.Editor)
	d, canDelete := c.ch.(channels.Deleter)
	switch {
	case op.kind == opEdit && canEdit:
		err = e.Edit(callCtx, op.chatID, id, op.text)
	case op.kind == opDelete && canDelete:
		if err = d.Delete(callCtx, op.chatID, id); err == nil {
			c.sentIDs.forget(op.chatID, id)
			c.forgetDeleted(root, op.chatID, id)
		}
	default:
		op.reply <- fmt.Errorf("%s is not supported on %s", action, c.channel)
		return
	}
	if err != nil {
		c.log.Warn().Err(err).Str("chat", op.chatID).Str("action", action).Msg("message tool")
		op.reply <- fmt.Errorf("the message was not %s: %w", done, err)
		return
	}
	if op.ids != nil {
		op.ids <- sentResult{ids: []string{id}}
	}
	op.reply <- nil
}
