package bolt

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

func TestCounts(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "reef.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Update(func(tx persistence.Tx) error {
		for i := range 5 {
			key := fmt.Sprintf("agent:main:fake:direct:%d", i)
			if err := tx.PutSession(persistence.SessionInfo{Key: key}); err != nil {
				return err
			}
			for range i {
				if _, err := tx.AppendInbox(key, messages.Inbound{Text: "x"}); err != nil {
					return err
				}
			}
		}
		_, err := tx.AppendOutbox("agent:main:fake:direct:9", messages.Outbound{Text: "y"}) // a session bucket without info
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Counts(nil)
	if err != nil || c != (Counts{Sessions: 6, Inbox: 0 + 1 + 2 + 3 + 4, Outbox: 1}) {
		t.Fatalf("Counts = %+v, %v", c, err)
	}
	if n, err := s.SessionCount(); n != 6 || err != nil {
		t.Fatalf("SessionCount = %d, %v", n, err)
	}
}

// BenchmarkCounts100k measures Counts and SessionCount with 100,000 stored sessions
// (BENCHMARKS.md: /metrics with 100,000 stored sessions).
func BenchmarkCounts100k(b *testing.B) {
	s := storeWithSessions(b, 100_000)
	b.Run("Counts", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Counts(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SessionCount", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.SessionCount(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func storeWithSessions(b *testing.B, n int) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "reef.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	now := time.Now()
	for start := 0; start < n; start += 10_000 {
		err := s.Update(func(tx persistence.Tx) error {
			for i := start; i < min(start+10_000, n); i++ {
				key := fmt.Sprintf("agent:main:telegram:direct:%d", 100000000+i)
				if err := tx.PutSession(persistence.SessionInfo{Key: key, AgentID: "main", Channel: "telegram", Created: now, Updated: now}); err != nil {
					return err
				}
				if _, err := tx.AppendMessages(key, messages.ChatMessage{Role: messages.RoleUser, Content: "hello"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s
}
