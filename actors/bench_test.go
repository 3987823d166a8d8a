package actors_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/messages"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// benchHarness is a harness whose fake provider answers "ok" at once and keeps few requests.
func benchHarness(b *testing.B) *harness {
	script := fakellm.NewScript()
	script.KeepRequests = 16
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "ok"} }
	return newHarness(b, harnessOpts{script: script})
}

// converse runs chats concurrent conversations, each sending perChat messages one after the
// other (the next once the previous was answered), and returns when all are answered.
func converse(b *testing.B, h *harness, chats, perChat int) {
	inboxes := make([]chan messages.Outbound, chats)
	for i := range inboxes {
		inboxes[i] = make(chan messages.Outbound, 1)
	}
	done := make(chan struct{})
	go func() { // route replies to their conversation
		for {
			select {
			case out := <-h.ch.Sent:
				var i int
				fmt.Sscan(out.ChatID, &i)
				inboxes[i] <- out
			case <-done:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range chats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := fmt.Sprint(i)
			for range perChat {
				h.say(chat, "hello")
				<-inboxes[i]
			}
		}()
	}
	wg.Wait()
	close(done)
}

// BenchmarkTurns measures complete turns per second through Connector → Storage → Router →
// Session → Turn → provider → Storage → Connector, with the in-process fake provider and a
// durable (fsync) bolt store: 256 conversations at once, each op one answered message.
func BenchmarkTurns(b *testing.B) {
	h := benchHarness(b)
	const chats = 256
	c0, w0, n0 := actors.StorageStats()
	p0 := h.store.Stats().Writes
	b.ResetTimer()
	start := time.Now()
	converse(b, h, chats, max(1, b.N/chats))
	elapsed := time.Since(start)
	c1, w1, n1 := actors.StorageStats()
	p1 := h.store.Stats().Writes
	b.ReportMetric(float64(max(1, b.N/chats)*chats)/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(w1-w0)/float64(max(1, c1-c0)), "writes/commit")
	b.ReportMetric(float64(n1-n0)/1e6/float64(max(1, c1-c0)), "ms/commit")
	b.ReportMetric(float64(p1-p0)/float64(max(1, c1-c0)), "pages/commit")
}

// BenchmarkIdleSessionHeap measures the heap held per live, idle Session actor (one short
// exchange in its transcript) after a garbage collection.
func BenchmarkIdleSessionHeap(b *testing.B) {
	const sessions = 2000
	for range b.N {
		h := benchHarness(b)
		converse(b, h, 1, 1) // warm up: first-use allocations are not per-session costs
		var before, after runtime.MemStats
		runtime.GC() // twice: sync.Pool victims (bbolt's page pool) survive one collection
		runtime.GC()
		runtime.ReadMemStats(&before)
		converse(b, h, sessions, 1)
		time.Sleep(100 * time.Millisecond) // let the goroutines of finished runs exit
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&after)
		if live := h.rt.LiveSessions(); live != sessions {
			b.Fatalf("%d live sessions, want %d", live, sessions)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/sessions, "B/session")
		if path := os.Getenv("REEF_HEAP_PROFILE"); path != "" { // inspect what sessions hold
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		h.stop()
	}
}
