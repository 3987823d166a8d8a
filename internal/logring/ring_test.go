package logring

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const secret = "sk-secret-0123456789abcdef"

func TestRingKeepsRedactsAndFilters(t *testing.T) {
	r := New(secret)
	r.Write([]byte(`{"level":"info","time":"2026-12-06T08:00:00Z","message":"started","n":3}`))
	r.Write([]byte(`{"level":"error","time":"2026-12-06T08:00:01Z","error":"401 for ` + secret + `","message":"channel stopped"}`))
	r.Write([]byte("not json\n"))
	all := r.Lines(Query{})
	if len(all) != 3 || all[0].Message != "started" || all[0].Fields != "n=3" || all[2].Message != "not json" {
		t.Fatalf("lines: %+v", all)
	}
	if strings.Contains(all[1].Fields, secret) || !strings.Contains(all[1].Fields, "[redacted]") {
		t.Errorf("the secret was kept: %q", all[1].Fields)
	}
	if got := r.Lines(Query{Level: "warn"}); len(got) != 1 || got[0].Level != "error" {
		t.Errorf("warn and above: %+v", got)
	}
	if got := r.Lines(Query{Text: "STARTED"}); len(got) != 1 {
		t.Errorf("text search: %+v", got)
	}
	if got := r.Lines(Query{After: all[1].Seq}); len(got) != 1 || got[0].Seq != all[2].Seq {
		t.Errorf("after: %+v", got)
	}
	// a secret known only later (the gateway token) is removed from what is kept too
	r.Write([]byte(`{"level":"warn","message":"token","token":"late-token-abcdef123456"}`))
	r.SetSecrets(secret, "late-token-abcdef123456")
	if got := r.Lines(Query{Text: "late-token"}); len(got) != 0 {
		t.Errorf("the late secret is still shown: %+v", got)
	}
}

func TestRingIsBounded(t *testing.T) {
	r := New()
	long := strings.Repeat("x", 5*MaxLine)
	for i := 0; i < 3*Size; i++ {
		r.Write([]byte(fmt.Sprintf(`{"level":"info","message":"line %d %s"}`, i, long)))
	}
	lines := r.Lines(Query{})
	if len(lines) != Size || !strings.HasPrefix(lines[0].Message, fmt.Sprintf("line %d ", 2*Size)) {
		t.Fatalf("kept %d lines from %.20q", len(lines), lines[0].Message)
	}
	if n := len(lines[0].Message); n > MaxLine+len("…") {
		t.Errorf("a line keeps %d bytes", n)
	}
	if got := r.Lines(Query{Limit: 10}); len(got) != 10 || got[9].Seq != lines[Size-1].Seq {
		t.Errorf("limit: %d lines", len(got))
	}
}

func TestFollowGetsNewLinesAndNeverBlocks(t *testing.T) {
	r := New()
	ch, stop := r.Follow()
	r.Write([]byte(`{"level":"info","message":"one"}`))
	select {
	case l := <-ch:
		if l.Message != "one" {
			t.Errorf("followed %+v", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower got nothing")
	}
	for i := 0; i < 10*followBuffer; i++ { // nobody reads: the writer goes on
		r.Write([]byte(`{"level":"info","message":"more"}`))
	}
	stop()
	stop()
}
