package actors

import (
	"encoding/json"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/persistence"
)

// The message tool's edit and delete in cluster mode (connector_edit.go). A conversation's
// runs move between nodes with its partition, and an edit on the new node names a message
// the old node's Connector sent, which this node's record in memory (sentLog) does not know.
// So in cluster mode a Connector also keeps the ids it sent per chat in the store, written in
// the transaction that marks the reply sent (markOnce), and a message op looks there first.
// The record is bounded per chat (sentPerChat), like the one in memory.

// sentBucket + the Connector's name holds, per chat id, the JSON list of the platform ids of
// the messages reef sent there lately, oldest first.
const sentBucket = "sent/"

// rememberSent adds ids to chat's record in the store.
func rememberSent(tx persistence.Tx, name, chat string, ids []string) error {
	list, err := storedSent(tx, name, chat)
	if err != nil {
		return err
	}
	list = append(list, ids...)
	if n := len(list); n > sentPerChat {
		list = list[n-sentPerChat:]
	}
	return putSent(tx, name, chat, list)
}

// forgetSent removes a deleted message from chat's record in the store.
func forgetSent(tx persistence.Tx, name, chat, id string) error {
	list, err := storedSent(tx, name, chat)
	if err != nil {
		return err
	}
	out := list[:0]
	for _, s := range list {
		if s != id {
			out = append(out, s)
		}
	}
	return putSent(tx, name, chat, out)
}

func storedSent(r persistence.Reader, name, chat string) ([]string, error) {
	v, ok, err := r.Get(sentBucket+name, chat)
	if err != nil || !ok {
		return nil, err
	}
	var list []string
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, nil // a damaged record is no record: the op is refused as for an unknown id
	}
	return list, nil
}

func putSent(tx persistence.Tx, name, chat string, list []string) error {
	v, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return tx.Put(sentBucket+name, chat, v)
}

// resolveSent finds a message of chat for a message op: in cluster mode in the store's
// record first (the messages of the conversation's runs on every node), then in memory.
func (c *Connector) resolveSent(chat, id string) (string, bool) {
	if c.deps.Cluster != nil {
		var list []string
		err := c.deps.Store.View(func(r persistence.Reader) error {
			var err error
			list, err = storedSent(r, c.name, chat)
			return err
		})
		if err != nil {
			c.log.Warn().Err(err).Str("chat", chat).Msg("message tool: could not read the messages sent on other nodes")
		} else if got, ok := findSent(list, id); ok {
			return got, true
		}
	}
	return c.sentIDs.resolve(chat, id)
}

// forgetDeleted drops a deleted message from the store's record too (cluster mode).
func (c *Connector) forgetDeleted(root *actor.RootContext, chat, id string) {
	if c.deps.Cluster == nil {
		return
	}
	name, log := c.name, c.log
	root.Send(c.storage, &storeWrite{Apply: func(tx persistence.Tx) error { return forgetSent(tx, name, chat, id) },
		Done: func(err error) {
			if err != nil {
				log.Warn().Err(err).Str("chat", chat).Msg("message tool: could not forget a deleted message")
			}
		}})
}
