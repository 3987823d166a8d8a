package bolt_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// benchMessage is a typical short chat turn.
var benchMessage = messages.ChatMessage{Role: messages.RoleUser, Content: strings.Repeat("hello reef ", 20)}

func openBench(b *testing.B) *bolt.Store {
	b.Helper()
	s, err := bolt.Open(filepath.Join(b.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkAppend commits one message per Update, with fsync: the cost of an un-batched write.
func BenchmarkAppend(b *testing.B) {
	s := openBench(b)
	for b.Loop() {
		err := s.Update(func(tx persistence.Tx) error {
			_, err := tx.AppendMessages("agent:main:telegram:direct:42", benchMessage)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendBatch commits one message for each of 64 sessions per Update, with fsync:
// the group-commit case. ns/write is the cost per session write.
func BenchmarkAppendBatch(b *testing.B) {
	const sessions = 64
	s := openBench(b)
	keys := make([]string, sessions)
	for i := range keys {
		keys[i] = fmt.Sprintf("agent:main:telegram:direct:%d", i)
	}
	for b.Loop() {
		err := s.Update(func(tx persistence.Tx) error {
			for _, k := range keys {
				if _, err := tx.AppendMessages(k, benchMessage); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sessions), "ns/write")
}
