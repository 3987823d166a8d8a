package access

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Pairing limits. Each sender has at most one pending code. A channel holds at most
// MaxPendingPairing pending codes; when it is full, a new sender's request evicts the oldest
// pending one if that is at least PairingMinAge old, so a burst of throwaway accounts cannot
// lock newcomers out for long; a sender who finds the queue full of younger requests is told
// to try again later, never left without an answer.
const (
	PairingTTL        = time.Hour
	MaxPendingPairing = 50
	PairingMinAge     = 10 * time.Minute
	pairingAlphabet   = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" // no 0/O, 1/I
)

// Pairing is a pending request of an unknown sender to talk to the bot.
type Pairing struct {
	Channel    string    `json:"channel"`
	Code       string    `json:"code"`
	SenderID   string    `json:"senderId"`
	SenderName string    `json:"senderName,omitempty"`
	ChatID     string    `json:"chatId"`
	Created    time.Time `json:"created"`
	Expires    time.Time `json:"expires"`
}

// Approval records a sender the owner approved.
type Approval struct {
	SenderID   string    `json:"senderId"`
	SenderName string    `json:"senderName,omitempty"`
	Approved   time.Time `json:"approved"`
}

// Pairing requests and approvals live in the store, in a bucket per channel.
func pairingBucket(channel string) string  { return "pairing/" + channel }
func approvedBucket(channel string) string { return "approved/" + channel }

// Approved reports whether the owner approved sender on channel.
func Approved(r persistence.Reader, channel, sender string) (bool, error) {
	_, ok, err := r.Get(approvedBucket(channel), sender)
	return ok, err
}

// PairingStatus says what RequestPairing did.
type PairingStatus int

const (
	// PairingNew: a new code was made; tell the sender with PairingNotice.
	PairingNew PairingStatus = iota
	// PairingPending: the sender has a pending code already and was told it; say nothing more.
	PairingPending
	// PairingRefused: the channel's queue is full of recent requests; tell the sender
	// PairingBusyNotice.
	PairingRefused
)

// RequestPairing records a pairing code for the sender of in. A sender with a pending code
// gets no second one. When MaxPendingPairing are pending, the oldest is evicted to make room
// if it is at least PairingMinAge old; otherwise the request is refused.
func RequestPairing(tx persistence.Tx, channel string, in *messages.Inbound, now time.Time) (string, PairingStatus, error) {
	pending, err := ListPairings(tx, channel, now)
	if err != nil {
		return "", 0, err
	}
	for _, p := range pending {
		if p.SenderID == in.SenderID {
			return "", PairingPending, nil
		}
	}
	for len(pending) >= MaxPendingPairing {
		oldest := pending[0]
		if now.Sub(oldest.Created) < PairingMinAge {
			return "", PairingRefused, nil
		}
		if err := tx.Delete(pairingBucket(channel), oldest.Code); err != nil {
			return "", 0, err
		}
		pending = pending[1:]
	}
	if err := pruneExpired(tx, channel, now); err != nil {
		return "", 0, err
	}
	p := Pairing{Channel: channel, Code: newCode(), SenderID: in.SenderID, SenderName: in.SenderName,
		ChatID: in.ChatID, Created: now, Expires: now.Add(PairingTTL)}
	b, _ := json.Marshal(p)
	return p.Code, PairingNew, tx.Put(pairingBucket(channel), p.Code, b)
}

// pruneExpired deletes expired and unreadable pairing requests, so the bucket does not grow
// with every sender that ever wrote.
func pruneExpired(tx persistence.Tx, channel string, now time.Time) error {
	var stale []string
	err := tx.Scan(pairingBucket(channel), "", func(k string, v []byte) error {
		var p Pairing
		if json.Unmarshal(v, &p) != nil || !now.Before(p.Expires) {
			stale = append(stale, k)
		}
		return nil
	})
	for _, k := range stale {
		if err == nil {
			err = tx.Delete(pairingBucket(channel), k)
		}
	}
	return err
}

func newCode() string {
	b := make([]byte, 8)
	rand.Read(b)
	for i := range b {
		b[i] = pairingAlphabet[int(b[i])%len(pairingAlphabet)]
	}
	return string(b)
}

// ListPairings returns the unexpired pairing requests of a channel ("" = every channel
// named in channels), oldest first.
func ListPairings(r persistence.Reader, channel string, now time.Time) ([]Pairing, error) {
	var out []Pairing
	err := r.Scan(pairingBucket(channel), "", func(_ string, v []byte) error {
		var p Pairing
		if json.Unmarshal(v, &p) == nil && now.Before(p.Expires) {
			out = append(out, p)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Pairing) int { return a.Created.Compare(b.Created) })
	return out, err
}

// ErrNoPairing means no pending pairing request has that code.
var ErrNoPairing = errors.New("no pending pairing request with that code (it may have expired: ask the sender to write again)")

// ApprovePairing approves the sender of a pending pairing request and returns it.
func ApprovePairing(tx persistence.Tx, channel, code string, now time.Time) (Pairing, error) {
	p, err := takePairing(tx, channel, code, now)
	if err != nil {
		return p, err
	}
	b, _ := json.Marshal(Approval{SenderID: p.SenderID, SenderName: p.SenderName, Approved: now})
	return p, tx.Put(approvedBucket(channel), p.SenderID, b)
}

// DenyPairing removes a pending pairing request.
func DenyPairing(tx persistence.Tx, channel, code string, now time.Time) (Pairing, error) {
	return takePairing(tx, channel, code, now)
}

func takePairing(tx persistence.Tx, channel, code string, now time.Time) (Pairing, error) {
	var p Pairing
	v, ok, err := tx.Get(pairingBucket(channel), code)
	if err != nil {
		return p, err
	}
	if !ok || json.Unmarshal(v, &p) != nil || !now.Before(p.Expires) {
		return p, fmt.Errorf("%s %s: %w", channel, code, ErrNoPairing)
	}
	return p, tx.Delete(pairingBucket(channel), code)
}

// PairingNotice is what an unknown sender is told, with the code the owner approves.
func PairingNotice(channel, code string) string {
	return fmt.Sprintf("Hi! I only talk to people my owner has approved. To ask for access, send my owner this code: %s\n"+
		"They approve it with: reef pairing approve %s %s\n(The code expires in one hour.)", code, channel, code)
}

// PairingBusyNotice is what an unknown sender is told when the channel's pairing queue is full.
const PairingBusyNotice = "Hi! I only talk to people my owner has approved, and too many access requests are waiting right now. " +
	"Please write again in a few minutes to get a code."
