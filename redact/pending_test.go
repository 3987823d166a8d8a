package redact

import (
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

// Text redacted piece by piece as it streams, each piece cut where Pending says, shows no
// more of a secret than the whole text redacted at once: however the pieces fall.
func TestPendingPiecewise(t *testing.T) {
	const key = "sk-live-0123456789abcdefXYZ"
	r := New(key, "123456:AAbbCCdd/+ee=")
	texts := []string{
		"the key is " + key + " and more text after it",
		"wrapped: sk-live-01234 56789abcdefXYZ end",
		"wrapped at a line: sk-live-0123456789\nabcdefXYZ\nnext line",
		"a prefix " + key[:14] + "… then words",
		"hex " + hex.EncodeToString([]byte(key)) + " done",
		"no secret here, only sk-lively words and 123 numbers",
		"twice " + key + key + " end",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range texts {
		want := r.String(text)
		for range 200 {
			var out, held strings.Builder
			rest := text
			for rest != "" {
				n := 1 + rng.IntN(min(len(rest), 9))
				held.WriteString(rest[:n])
				rest = rest[n:]
				s := held.String()
				cut := r.Pending(s)
				out.WriteString(r.String(s[:cut]))
				held.Reset()
				held.WriteString(s[cut:])
			}
			out.WriteString(r.String(held.String()))
			if got := out.String(); got != want {
				t.Fatalf("%q redacted in pieces = %q, want %q", text, got, want)
			}
		}
	}
}

func TestPending(t *testing.T) {
	const key = "sk-live-0123456789abcdefXYZ"
	r := New(key)
	for _, c := range []struct {
		in   string
		want int // bytes held back
	}{
		{"plain words ", 2}, // "s" may go on as "s k-live-...", a copy with a gap
		{"plain word ", 0},
		{"key sk-li", 5},
		{"key sk-live-0123 ", 13},    // a copy may go on after whitespace
		{"key sk-live-0123     ", 0}, // not after more than maxGap
		{"key " + key + " ", 0},      // a whole copy is no longer pending
		{"key " + key[:20], 20},      // a long prefix may go on
		{"sk-lively ", 0},            // not the secret
		{"dump " + hex.EncodeToString([]byte(key))[:10], 10}, // an encoded copy's start
	} {
		if got := len(c.in) - r.Pending(c.in); got != c.want {
			t.Errorf("Pending(%q) holds back %d bytes, want %d", c.in, got, c.want)
		}
	}
	var none *Redactor
	if none.Pending("sk-li") != 5 {
		t.Error("a nil Redactor holds text back")
	}
}
