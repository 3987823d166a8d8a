package actor

import (
	"io"
	"log/slog"
	"strconv"
	"testing"
)

// Benchmarks of the process registry and of an actor system's construction (whose cost was
// mostly the registry). They use only the registry API upstream has too, so the same file
// runs against upstream's registry for a before/after comparison.

func quietSystem() *ActorSystem {
	return NewActorSystem(WithLoggerFactory(func(*ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
}

func BenchmarkNewActorSystem(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		quietSystem()
	}
}

// BenchmarkProcessRegistryAddGetRemove is the life of a short-lived process (a future, a
// passivating session): registered, looked up, removed, from many goroutines at once.
func BenchmarkProcessRegistryAddGetRemove(b *testing.B) {
	reg := quietSystem().ProcessRegistry
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		p := NewActorProcess(nil)
		for pb.Next() {
			pid, ok := reg.Add(p, "b"+reg.NextId())
			if !ok {
				b.Error("id taken")
			}
			if _, ok := reg.Get(pid); !ok {
				b.Error("not found")
			}
			reg.Remove(pid)
		}
	})
}

// BenchmarkProcessRegistryGet looks up processes in a registry holding 10,000 of them, from
// many goroutines at once: the lookup behind every send to a PID whose process is not cached.
func BenchmarkProcessRegistryGet(b *testing.B) {
	reg := quietSystem().ProcessRegistry
	const n = 10000
	pids := make([]*PID, n)
	for i := range pids {
		pids[i], _ = reg.Add(NewActorProcess(nil), "g"+strconv.Itoa(i))
	}
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, ok := reg.Get(pids[i%n]); !ok {
				b.Error("not found")
			}
			i += 7
		}
	})
}
