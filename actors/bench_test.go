package actors_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	fakellm "github.com/reefgw/reef/providers/fake"
)

// BenchmarkTurns measures complete turns per second through Connector → Storage → Router →
// Session → Turn → provider → Storage → Connector, with the in-process fake provider and a
// durable (fsync) bolt store. 256 conversations talk at once; each op is one answered message.
func BenchmarkTurns(b *testing.B) {
	script := fakellm.NewScript()
	script.KeepRequests = 16
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "ok"} }
	h := newHarness(b, harnessOpts{script: script})
	defer h.stop()
	const chats = 256
	b.ResetTimer()
	start := time.Now()
	sent := 0
	for sent < b.N {
		n := min(chats, b.N-sent)
		go func(base int) {
			for i := range n {
				h.say(fmt.Sprint(i), "hello")
			}
		}(sent)
		for range n {
			<-h.ch.Sent
		}
		sent += n
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
}

// BenchmarkIdleSessionHeap measures the heap held per live, idle Session actor (one short
// exchange in its transcript) after a garbage collection.
func BenchmarkIdleSessionHeap(b *testing.B) {
	const sessions = 2000
	for range b.N {
		script := fakellm.NewScript()
		script.KeepRequests = 16
		script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "ok"} }
		h := newHarness(b, harnessOpts{script: script})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		go func() {
			for i := range sessions {
				h.say(fmt.Sprint(i), "hi")
			}
		}()
		for range sessions {
			<-h.ch.Sent
		}
		time.Sleep(200 * time.Millisecond) // let goroutines of finished runs exit
		runtime.GC()
		runtime.ReadMemStats(&after)
		if live := h.rt.LiveSessions(); live != sessions {
			b.Fatalf("%d live sessions, want %d", live, sessions)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/sessions, "B/session")
		h.stop()
	}
}
