package access

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/persistence"
)

// Exec approvals: a run that wants to run a command the owner must approve first stores an
// ExecRequest and waits; the owner's decision (or the timeout) removes it and writes an
// ExecDecision, the audit record, in the same transaction, so each request is decided and
// audited exactly once. Approving "always" also stores the command's prefix (see Prefix):
// later commands that match it run without asking, each audited as DecisionPrefix.
const (
	pendingBucket = "approvals/pending" // id → ExecRequest
	auditBucket   = "approvals/audit"   // <unix nanos, 20 digits>-<id> → ExecDecision
	alwaysBucket  = "approvals/always"  // prefix → ExecPrefix
)

// Approval modes (tools.exec.approvals).
const (
	ApprovalsOff    = "off"    // exec never asks
	ApprovalsOwner  = "owner"  // exec in a run the owner did not start asks the owner (default)
	ApprovalsAlways = "always" // every exec asks, the owner's own runs too
)

// Decisions an ExecDecision records.
const (
	DecisionApproved  = "approved"  // once
	DecisionAlways    = "always"    // approved, and the prefix stored
	DecisionDenied    = "denied"    // by the owner
	DecisionTimeout   = "timeout"   // nobody decided in time: denied
	DecisionWithdrawn = "withdrawn" // the run that asked ended first: nothing ran
	DecisionPrefix    = "prefix"    // allowed without asking by a stored prefix
)

// ExecRequest is a command waiting for the owner's approval. Command is redacted of secrets.
type ExecRequest struct {
	ID         string    `json:"id"`
	SessionKey string    `json:"sessionKey"`
	CallID     string    `json:"callId"`
	Command    string    `json:"command"`
	Workdir    string    `json:"workdir,omitempty"` // relative to the workspace; "" = the workspace
	Channel    string    `json:"channel"`
	ChatID     string    `json:"chatId"`
	ChatType   string    `json:"chatType,omitempty"`
	SenderID   string    `json:"senderId"`
	SenderName string    `json:"senderName,omitempty"`
	Prefix     string    `json:"prefix,omitempty"` // what approving always would store; "" = it cannot
	Created    time.Time `json:"created"`
	Deadline   time.Time `json:"deadline"`
}

// Asker names who asked: "telegram:42 (Ann) in group -100" or "terminal".
func (r ExecRequest) Asker() string {
	if r.Channel == "terminal" || r.Channel == "" {
		return "the terminal"
	}
	who := r.Channel + ":" + DisplayName(r.SenderID)
	if name := DisplayName(r.SenderName); name != "" {
		who += " (" + name + ")"
	}
	if r.ChatType != "" && r.ChatType != "direct" {
		who += " in " + DisplayName(r.ChatType) + " " + DisplayName(r.ChatID)
	} else {
		who += " in a direct chat"
	}
	return who
}

// ExecDecision is the audit record of one request's outcome.
type ExecDecision struct {
	ExecRequest
	Decision string    `json:"decision"`
	By       string    `json:"by"` // who decided: "terminal", "telegram:42", "reef" (timeout, withdrawal), "prefix"
	At       time.Time `json:"at"`
}

// Allowed reports whether the command may run.
func (d ExecDecision) Allowed() bool {
	return d.Decision == DecisionApproved || d.Decision == DecisionAlways || d.Decision == DecisionPrefix
}

// ExecPrefix is a command prefix the owner allowed always.
type ExecPrefix struct {
	Prefix string    `json:"prefix"`
	By     string    `json:"by"`
	Added  time.Time `json:"added"`
	FromID string    `json:"fromId,omitempty"` // the request it was approved with
}

// Errors of the decisions.
var (
	ErrNoExecRequest = errors.New("no command is waiting for approval with that id (it may have been decided or timed out: /approvals lists what waits)")
	ErrNoPrefix      = errors.New("no stored prefix is exactly that (the list shows them)")
)

// NewExecRequestID returns a fresh six-character id for which taken (the pending ids) is false.
func NewExecRequestID(taken func(string) bool) string {
	for {
		b := make([]byte, 6)
		rand.Read(b)
		for i := range b {
			b[i] = pairingAlphabet[int(b[i])%len(pairingAlphabet)]
		}
		if !taken(string(b)) {
			return string(b)
		}
	}
}

// PutExecRequest stores a pending request.
func PutExecRequest(tx persistence.Tx, req ExecRequest) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return tx.Put(pendingBucket, req.ID, b)
}

// ExecRequests returns the pending requests, oldest first.
func ExecRequests(r persistence.Reader) ([]ExecRequest, error) {
	var out []ExecRequest
	err := r.Scan(pendingBucket, "", func(_ string, v []byte) error {
		var req ExecRequest
		if json.Unmarshal(v, &req) == nil {
			out = append(out, req)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b ExecRequest) int { return a.Created.Compare(b.Created) })
	return out, err
}

// NormalizeID makes a typed id comparable: upper case, spaces trimmed.
func NormalizeID(id string) string { return strings.ToUpper(strings.TrimSpace(id)) }

// DecideExec decides the pending request id: it removes it, audits the decision and, for
// DecisionAlways with a prefix, stores the prefix. ErrNoExecRequest when nothing waits under id.
func DecideExec(tx persistence.Tx, id, decision, by string, at time.Time) (ExecDecision, error) {
	id = NormalizeID(id)
	v, ok, err := tx.Get(pendingBucket, id)
	if err != nil {
		return ExecDecision{}, err
	}
	if !ok {
		return ExecDecision{}, ErrNoExecRequest
	}
	var req ExecRequest
	if err := json.Unmarshal(v, &req); err != nil {
		return ExecDecision{}, fmt.Errorf("approval %s: %w", id, err)
	}
	if err := tx.Delete(pendingBucket, id); err != nil {
		return ExecDecision{}, err
	}
	if decision == DecisionAlways && req.Prefix == "" {
		decision = DecisionApproved // a command with shell operators is approved once
	}
	d := ExecDecision{ExecRequest: req, Decision: decision, By: by, At: at}
	if err := AuditExec(tx, d); err != nil {
		return d, err
	}
	if decision == DecisionAlways {
		p, _ := json.Marshal(ExecPrefix{Prefix: req.Prefix, By: by, Added: at, FromID: id})
		return d, tx.Put(alwaysBucket, req.Prefix, p)
	}
	return d, nil
}

// AuditExec writes an audit record.
func AuditExec(tx persistence.Tx, d ExecDecision) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return tx.Put(auditBucket, fmt.Sprintf("%020d-%s", d.At.UnixNano(), d.ID), b)
}

// ExecDecisions returns the newest limit audit records (0: all), newest first.
func ExecDecisions(r persistence.Reader, limit int) ([]ExecDecision, error) {
	var out []ExecDecision
	err := r.Scan(auditBucket, "", func(_ string, v []byte) error {
		var d ExecDecision
		if json.Unmarshal(v, &d) == nil {
			out = append(out, d)
		}
		return nil
	})
	slices.Reverse(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

// PruneExecAudit keeps the newest keep audit records.
func PruneExecAudit(tx persistence.Tx, keep int) error {
	var keys []string
	if err := tx.Scan(auditBucket, "", func(k string, _ []byte) error {
		keys = append(keys, strings.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	for len(keys) > keep {
		if err := tx.Delete(auditBucket, keys[0]); err != nil {
			return err
		}
		keys = keys[1:]
	}
	return nil
}

// ExecPrefixes returns the stored allow-always prefixes, sorted.
func ExecPrefixes(r persistence.Reader) ([]ExecPrefix, error) {
	var out []ExecPrefix
	err := r.Scan(alwaysBucket, "", func(_ string, v []byte) error {
		var p ExecPrefix
		if json.Unmarshal(v, &p) == nil {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// RevokeExecPrefix removes a stored prefix (spaces between words do not matter).
func RevokeExecPrefix(tx persistence.Tx, prefix string) error {
	prefix = strings.Join(strings.Fields(prefix), " ")
	_, ok, err := tx.Get(alwaysBucket, prefix)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoPrefix
	}
	return tx.Delete(alwaysBucket, prefix)
}

// MatchPrefix returns the first of prefixes that command matches.
func MatchPrefix(command string, prefixes []ExecPrefix) (string, bool) {
	for _, p := range prefixes {
		if Matches(command, p.Prefix) {
			return p.Prefix, true
		}
	}
	return "", false
}
