package access

import (
	"errors"
	"fmt"
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
			code, _, err = RequestPairing(tx, "telegram", &messages.Inbound{SenderID: sender, SenderName: "N " + sender, ChatID: "c" + sender}, now)
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

// TestPairingQueue is issue #20's finding 6: the pending cap is per sender with a channel-wide
// ceiling that a handful of throwaway accounts cannot fill, a full queue makes room by evicting
// the oldest request, and a sender who is refused is told so.
func TestPairingQueue(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	type req struct {
		sender string
		at     time.Duration // after t0
	}
	many := func(n int, at time.Duration) []req {
		var rs []req
		for i := range n {
			rs = append(rs, req{fmt.Sprintf("spam%02d", i), at + time.Duration(i)*time.Second})
		}
		return rs
	}
	tests := []struct {
		name        string
		before      []req
		ask         req
		want        PairingStatus
		wantPending int
		wantGone    string // a sender whose request must no longer be pending
	}{
		{name: "three throwaway accounts do not block a fourth sender",
			before: many(3, 0), ask: req{"mom", 5 * time.Minute}, want: PairingNew, wantPending: 4},
		{name: "one pending code per sender",
			before: []req{{"mom", 0}}, ask: req{"mom", time.Minute}, want: PairingPending, wantPending: 1},
		{name: "a full queue of recent requests refuses, and says so",
			before: many(MaxPendingPairing, 0), ask: req{"mom", PairingMinAge - 2*time.Minute},
			want: PairingRefused, wantPending: MaxPendingPairing},
		{name: "a full queue evicts the oldest request once it is old enough",
			before: many(MaxPendingPairing, 0), ask: req{"mom", PairingMinAge},
			want: PairingNew, wantPending: MaxPendingPairing, wantGone: "spam00"},
		{name: "expired requests do not count",
			before: many(MaxPendingPairing, 0), ask: req{"mom", PairingTTL + time.Minute},
			want: PairingNew, wantPending: 1, wantGone: "spam49"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			request := func(r req) (string, PairingStatus) {
				t.Helper()
				var code string
				var status PairingStatus
				if err := store.Update(func(tx persistence.Tx) error {
					var err error
					code, status, err = RequestPairing(tx, "telegram", &messages.Inbound{SenderID: r.sender, ChatID: "c" + r.sender}, t0.Add(r.at))
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return code, status
			}
			for _, r := range tt.before {
				if _, st := request(r); st != PairingNew {
					t.Fatalf("setup request of %s: status %d, want PairingNew", r.sender, st)
				}
			}
			code, status := request(tt.ask)
			if status != tt.want || (code != "") != (tt.want == PairingNew) {
				t.Fatalf("request of %s: code %q, status %d; want status %d", tt.ask.sender, code, status, tt.want)
			}
			var ps []Pairing
			if err := store.View(func(r persistence.Reader) error {
				var err error
				ps, err = ListPairings(r, "telegram", t0.Add(tt.ask.at))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if len(ps) != tt.wantPending {
				t.Errorf("%d pending, want %d", len(ps), tt.wantPending)
			}
			n := 0
			if err := store.View(func(r persistence.Reader) error {
				return r.Scan(pairingBucket("telegram"), "", func(string, []byte) error { n++; return nil })
			}); err != nil {
				t.Fatal(err)
			}
			if n != len(ps) {
				t.Errorf("%d records stored, %d pending: expired or evicted requests left behind", n, len(ps))
			}
			for _, p := range ps {
				if tt.wantGone != "" && p.SenderID == tt.wantGone {
					t.Errorf("%s's request is still pending", tt.wantGone)
				}
				if code != "" && p.SenderID == tt.ask.sender && p.Code != code {
					t.Errorf("%s pending with code %s, want %s", p.SenderID, p.Code, code)
				}
			}
		})
	}
}

func TestPairingBusyNotice(t *testing.T) {
	if !strings.Contains(PairingBusyNotice, "again in a few minutes") {
		t.Errorf("busy notice %q does not tell the sender to try later", PairingBusyNotice)
	}
}

func TestPairingNotice(t *testing.T) {
	got := PairingNotice("telegram", "ABCD2345")
	if !strings.Contains(got, "reef pairing approve telegram ABCD2345") {
		t.Errorf("notice %q does not say how to approve", got)
	}
}
