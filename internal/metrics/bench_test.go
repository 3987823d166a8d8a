package metrics

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// BenchmarkScrape100k is a /metrics scrape with 100,000 stored sessions (BENCHMARKS.md),
// after Prime (one pass over the store, in the background at start; reported as prime-ms).
func BenchmarkScrape100k(b *testing.B) {
	const n = 100_000
	store, err := bolt.Open(filepath.Join(b.TempDir(), "reef.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	for start := 0; start < n; start += 10_000 {
		err := store.Update(func(tx persistence.Tx) error {
			for i := start; i < min(start+10_000, n); i++ {
				key := fmt.Sprintf("agent:main:telegram:direct:%d", 100000000+i)
				if err := tx.PutSession(persistence.SessionInfo{Key: key, AgentID: "main", Channel: "telegram", Created: now, Updated: now}); err != nil {
					return err
				}
				if _, err := tx.AppendMessages(key, messages.ChatMessage{Role: messages.RoleUser, Content: "hello"}); err != nil {
					return err
				}
				if i%100 == 0 {
					if _, err := tx.AppendInbox(key, messages.Inbound{Channel: "telegram", Text: "waiting"}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	m := New()
	for i := range 20 { // some labelled series, as a gateway has after a while
		m.modelCall("openai", fmt.Sprintf("model-%d", i%3), time.Second, messages.Usage{InputTokens: 10, OutputTokens: 5}, false)
		m.toolCalls.add(1, fmt.Sprintf("tool-%d", i), "ok")
		m.messagesIn.add(1, "telegram")
	}
	src := Source{
		LiveSessions:   func() int { return 1000 },
		StoredSessions: store.SessionCount,
		Connectors:     func() []Connector { return []Connector{{Name: "telegram", Up: true}} },
	}
	w := bufio.NewWriter(io.Discard)
	start := time.Now()
	err = m.Prime(func(began func()) (int, int, error) {
		c, err := store.Counts(began)
		return c.Inbox, c.Outbox, err
	})
	if err != nil {
		b.Fatal(err)
	}
	prime := time.Since(start)
	if got := m.stored.inbox.Load(); got != n/100 {
		b.Fatalf("queue depth %d, want %d", got, n/100)
	}
	b.ResetTimer()
	for b.Loop() {
		m.write(w, src)
	}
	b.ReportMetric(float64(prime.Microseconds())/1000, "prime-ms")
}
