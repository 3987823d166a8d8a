// Package subagent is the pure part of multi-agent delegation: the arguments of the session
// tools, the link between a sub-agent and its parent as the store keeps it, child session
// keys, and the completion event a parent receives. The actors package runs sub-agents; the
// tools in tools/sessions only check arguments and hand them to it.
package subagent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The links in the store: one record per child, and an index of every parent's children.
const (
	bucketLinks    = "subagents/runs"     // <child key> → Link
	bucketChildren = "subagents/children" // <parent key>\n<child key> → ""
)

// Link is a sub-agent's record: who spawned it, for what, under which limits, and how its run
// ended. It is written when the child is spawned and again, with its status, in the
// transaction that records the child's final run and puts the completion in the parent's inbox.
type Link struct {
	Child   string `json:"child"`
	Parent  string `json:"parent"`
	RunID   string `json:"runId"`
	AgentID string `json:"agentId"`
	Label   string `json:"label,omitempty"`
	Task    string `json:"task"`
	Model   string `json:"model,omitempty"`
	Mode    string `json:"mode"`    // run | session
	Cleanup string `json:"cleanup"` // keep | delete
	Context string `json:"context"` // isolated | fork
	Depth   int    `json:"depth"`   // 1 for a child of a conversation, 2 for a grandchild...
	// Call names the parent's tool call that spawned it: the inbox seq of the first message
	// the parent's run answered and the call's id ("12 call_abc"). A run resumed after a
	// crash that calls sessions_spawn again with that id is given this child, not a second.
	Call string `json:"call,omitempty"`
	// RunTimeout stops the child's run after this long (0: only the agent's limits).
	RunTimeout time.Duration `json:"runTimeout,omitempty"`
	// ArchiveAfter is how long after its (last) run ends the child is archived: the spawning
	// agent's subagents.archiveAfterMinutes.
	ArchiveAfter time.Duration `json:"archiveAfter,omitempty"`
	// Deliver is where the parent's answer to the completion goes: the chat the parent's run
	// answered when it spawned the child ("" channel: not delivered).
	Deliver Target `json:"deliver,omitzero"`
	// Tools is the standing of the parent's run: the child's runs and the parent's run that
	// answers the completion get no more.
	Tools []string `json:"tools"`
	// Owner is true when the parent's run had the owner's standing (messages.Standing.Owner).
	Owner bool `json:"owner,omitempty"`

	Status  string         `json:"status"` // messages.Subagent*
	Why     string         `json:"why,omitempty"`
	Answer  string         `json:"answer,omitempty"` // the child's final answer (capped), for /subagents log
	Usage   messages.Usage `json:"usage,omitzero"`
	Created time.Time      `json:"created"`
	Ended   time.Time      `json:"ended,omitzero"`
	// Runs counts the runs that ended with a completion; RunStarted is when the latest began
	// (zero: at Created). A child of mode "session" runs again for each follow-up (FollowUp).
	Runs       int       `json:"runs,omitempty"`
	RunStarted time.Time `json:"runStarted,omitzero"`
	// FollowUps counts the follow-ups the parent sent (FollowUp, in the transaction that puts
	// each in the child's inbox). The parent owns it: the child's writes keep the stored value.
	FollowUps int `json:"followUps,omitempty"`
	// ArchiveDue is when the child that ended is to be archived (archive.go); Archived, when
	// it was: its session is unloaded and takes no more work, its transcript is kept.
	ArchiveDue time.Time `json:"archiveDue,omitzero"`
	Archived   time.Time `json:"archived,omitzero"`
}

// Target is a chat a reply goes to.
type Target struct {
	Channel  string            `json:"channel,omitempty"`
	Account  string            `json:"account,omitempty"`
	ChatID   string            `json:"chatId,omitempty"`
	ThreadID string            `json:"threadId,omitempty"`
	ChatType messages.ChatType `json:"chatType,omitempty"`
	SenderID string            `json:"senderId,omitempty"`
}

// Active reports whether the child has not ended yet.
func (l *Link) Active() bool {
	return l.Status == messages.SubagentRunning || l.Status == messages.SubagentQueued
}

// Runtime is how long the child's latest run took (until now when it has not ended).
func (l *Link) Runtime(now time.Time) time.Duration {
	end, start := l.Ended, l.Created
	if end.IsZero() {
		end = now
	}
	if !l.RunStarted.IsZero() {
		start = l.RunStarted
	}
	return end.Sub(start).Round(time.Second)
}

// Persistent reports whether the child stays addressable after its run (mode "session"):
// its parent's follow-ups start new runs, each ending with a completion, until it is archived.
func (l *Link) Persistent() bool { return l.Mode == "session" }

// Addressable reports whether a follow-up can start a new run of the child: a child of mode
// "session" not archived.
func (l *Link) Addressable() bool { return l.Persistent() && l.Archived.IsZero() }

// FollowUpSource is the source of the events a parent sends its child (subagents steer,
// sessions_send without waiting): "session:<parent>".
func FollowUpSource(parent string) string { return "session:" + parent }

// IsFollowUp reports whether in is more work for the child l from its parent: a follow-up
// (only a child of mode "session" takes them; its run that answers one reports with a
// completion).
func (l *Link) IsFollowUp(in messages.Inbound) bool {
	return l.Persistent() && in.System && in.Source == FollowUpSource(l.Parent)
}

// FollowUp counts a follow-up the parent sends the child in the transaction that puts it in
// the child's inbox. A child that ended becomes active again (running; the gateway-wide gate
// may mark it queued), out of the archive schedule, so its next run ends with a completion.
// An archived child takes no more work.
func FollowUp(tx persistence.Tx, child string, now time.Time) (Link, error) {
	l, ok, err := Get(tx, child)
	switch {
	case err != nil:
		return l, err
	case !ok:
		return l, fmt.Errorf("subagent: no sub-agent %s", child)
	case !l.Archived.IsZero():
		return l, fmt.Errorf("subagent: %s was archived: spawn a new sub-agent", child)
	}
	l.FollowUps++
	if err := reactivate(tx, &l, now); err != nil {
		return l, err
	}
	return l, Put(tx, &l)
}

// Resume marks a child of mode "session" that ended active again when its run takes a
// follow-up its parent's FollowUp did not mark (one stored before FollowUp was): a no-op for
// an active child.
func Resume(tx persistence.Tx, child string, now time.Time) error {
	l, ok, err := Get(tx, child)
	if err != nil || !ok || l.Active() || !l.Archived.IsZero() {
		return err
	}
	if err := reactivate(tx, &l, now); err != nil {
		return err
	}
	return Put(tx, &l)
}

// reactivate makes an ended child running again and takes it out of the archive schedule.
func reactivate(tx persistence.Tx, l *Link, now time.Time) error {
	if l.Active() {
		return nil
	}
	l.Status, l.Why, l.Ended, l.RunStarted = messages.SubagentRunning, "", time.Time{}, now
	return Unschedule(tx, l)
}

// PendingFollowUps returns the inbox seqs of the follow-ups the child l holds and has not
// answered yet (none for a child of mode "run").
func PendingFollowUps(r persistence.Reader, l *Link) ([]uint64, error) {
	if !l.Persistent() {
		return nil, nil
	}
	items, err := r.Inbox(l.Child)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, it := range items {
		if l.IsFollowUp(it.Inbound) {
			seqs = append(seqs, it.Seq)
		}
	}
	return seqs, nil
}

// IsKey reports whether key names a sub-agent's session.
func IsKey(key string) bool { return strings.Contains(key, ":subagent:") }

// NewID returns a random id in the UUID format.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ChildKey names a new child of parent running agentID: agent:<id>:subagent:<uuid> for a
// child of a conversation, the parent's key + ":subagent:<uuid>" for a child of a sub-agent
// of the same agent.
func ChildKey(parent, parentAgent, agentID, id string) string {
	if IsKey(parent) && agentID == parentAgent {
		return parent + ":subagent:" + id
	}
	return "agent:" + agentID + ":subagent:" + id
}

// Put stores l and indexes it under its parent.
func Put(tx persistence.Tx, l *Link) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("subagent: encode link: %w", err)
	}
	if err := tx.Put(bucketChildren, l.Parent+"\n"+l.Child, nil); err != nil {
		return err
	}
	return tx.Put(bucketLinks, l.Child, b)
}

// Get returns the link of child and whether there is one.
func Get(r persistence.Reader, child string) (Link, bool, error) {
	b, ok, err := r.Get(bucketLinks, child)
	if err != nil || !ok {
		return Link{}, false, err
	}
	var l Link
	if err := json.Unmarshal(b, &l); err != nil {
		return Link{}, false, fmt.Errorf("subagent: decode link %s: %w", child, err)
	}
	return l, true, nil
}

// Children returns the links of parent's children, oldest first.
func Children(r persistence.Reader, parent string) ([]Link, error) {
	var keys []string
	err := r.Scan(bucketChildren, parent+"\n", func(k string, _ []byte) error {
		keys = append(keys, strings.TrimPrefix(k, parent+"\n"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Link, 0, len(keys))
	for _, k := range keys {
		l, ok, err := Get(r, k)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, l)
		}
	}
	sortByCreated(out)
	return out, nil
}

// All returns every link, by child key.
func All(r persistence.Reader) (map[string]Link, error) {
	out := map[string]Link{}
	err := r.Scan(bucketLinks, "", func(k string, v []byte) error {
		var l Link
		if err := json.Unmarshal(v, &l); err != nil {
			return fmt.Errorf("subagent: decode link %s: %w", k, err)
		}
		out[k] = l
		return nil
	})
	return out, err
}

func sortByCreated(ls []Link) {
	slices.SortStableFunc(ls, func(a, b Link) int { return a.Created.Compare(b.Created) })
}

// SetStatus marks a child that has not ended queued or running (the gateway-wide gate
// decides which), and returns its link and whether it changed. An ended child is left as it is.
func SetStatus(tx persistence.Tx, child, status string) (Link, bool, error) {
	l, ok, err := Get(tx, child)
	if err != nil || !ok || !l.Active() || l.Status == status {
		return l, false, err
	}
	l.Status = status
	return l, true, Put(tx, &l)
}
