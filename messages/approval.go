package messages

import "time"

// ApprovalDecided is an exec approval's decision on its way to the run that asked, in cluster
// mode: the node that decided puts it in the asking session's inbox (Inbound.Approval, a
// System event) in the transaction that removes the request, and the node that runs the
// session hands it to the call that waits there. The session never runs it as a message.
type ApprovalDecided struct {
	ID       string    `json:"id"` // the request's id
	CallID   string    `json:"callId"`
	Decision string    `json:"decision"` // access.DecisionApproved, DecisionAlways, DecisionDenied, DecisionTimeout
	By       string    `json:"by"`
	At       time.Time `json:"at"`
}
