package access

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
)

func TestPairingLifecycle(t *testing.T) {
	store := memory.New()
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	request := func(sender string, now time.Time) string {
		t.Helper()
		var code string
		if err := store.Update(func(tx persistence.Tx) error {
			var err error
			code, err = RequestPairing(tx, "telegram", &messages.Inbound{SenderID: sender, SenderName: "N " + sender, ChatID: "c" + sender}, now)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return code
	}
	pending := func(now time.Time) []Pairing {
		t.Helper()
		var ps []Pairing
		if err := store.View(func(r persistence.Reader) error {
			var err error
			ps, err = ListPairings(r, "telegram", now)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ps
	}
	approved := func(sender string) bool {
		t.Helper()
		var ok bool
		if err := store.View(func(r persistence.Reader) error {
			var err error
			ok, err = Approved(r, "telegram", sender)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	decide := func(approve bool, code string, now time.Time) (Pairing, error) {
		var p Pairing
		err := store.Update(func(tx persistence.Tx) error {
			var err error
			if approve {
				p, err = ApprovePairing(tx, "telegram", code, now)
			} else {
				p, err = DenyPairing(tx, "telegram", code, now)
			}
			return err
		})
		return p, err
	}

	code := request("u1", t0)
	if len(code) != 8 || strings.ContainsAny(code, "01OI") {
		t.Errorf("code %q: want 8 characters without 0, 1, O or I", code)
	}
	if again := request("u1", t0.Add(time.Minute)); again != "" {
		t.Errorf("a second request of a pending sender made code %q", again)
	}
	request("u2", t0.Add(2*time.Minute))
	request("u3", t0.Add(3*time.Minute))
	if c := request("u4", t0.Add(4*time.Minute)); c != "" {
		t.Errorf("a fourth pending request made code %q (limit %d)", c, MaxPendingPairing)
	}
	ps := pending(t0.Add(5 * time.Minute))
	if len(ps) != 3 || ps[0].SenderID != "u1" || ps[2].SenderID != "u3" || ps[0].ChatID != "cu1" || !ps[0].Expires.Equal(t0.Add(PairingTTL)) {
		t.Fatalf("pending = %+v, want u1, u2, u3, oldest first, expiring after %v", ps, PairingTTL)
	}

	p, err := decide(true, code, t0.Add(10*time.Minute))
	if err != nil || p.SenderID != "u1" || !approved("u1") {
		t.Fatalf("approve: %+v, %v (approved: %v)", p, err, approved("u1"))
	}
	if _, err := decide(true, code, t0.Add(11*time.Minute)); !errors.Is(err, ErrNoPairing) {
		t.Errorf("approving a used code: %v, want ErrNoPairing", err)
	}
	if p, err := decide(false, ps[1].Code, t0.Add(12*time.Minute)); err != nil || p.SenderID != "u2" || approved("u2") {
		t.Errorf("deny: %+v, %v (approved: %v)", p, err, approved("u2"))
	}

	// Codes expire: u3's is gone after an hour, and a new request may be made.
	late := t0.Add(3*time.Minute + PairingTTL)
	if ps := pending(late); len(ps) != 0 {
		t.Errorf("pending after expiry: %+v", ps)
	}
	if _, err := decide(true, ps[2].Code, late); !errors.Is(err, ErrNoPairing) || approved("u3") {
		t.Errorf("approving an expired code: %v (approved: %v)", err, approved("u3"))
	}
	if c := request("u3", late); c == "" {
		t.Error("no new code after the old one expired")
	}
}

func TestPairingNotice(t *testing.T) {
	got := PairingNotice("telegram", "ABCD2345")
	if !strings.Contains(got, "reef pairing approve telegram ABCD2345") {
		t.Errorf("notice %q does not say how to approve", got)
	}
}
