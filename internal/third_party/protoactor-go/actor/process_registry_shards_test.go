package actor

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
	"unsafe"
)

// Tests of reef's sharded process registry (see process_registry.go): the semantics callers
// rely on, and that shards give memory back once most processes are gone.

type stubProcess struct{ name string }

func (*stubProcess) SendUserMessage(*PID, interface{})   {}
func (*stubProcess) SendSystemMessage(*PID, interface{}) {}
func (*stubProcess) Stop(*PID)                           {}

func TestProcessRegistryAddKeepsFirst(t *testing.T) {
	reg := quietSystem().ProcessRegistry
	first, second := &stubProcess{"first"}, &stubProcess{"second"}

	pid, absent := reg.Add(first, "x")
	if !absent || pid.Id != "x" || pid.Address != reg.Address {
		t.Fatalf("first Add = %v, %v; want pid x at %s, true", pid, absent, reg.Address)
	}
	pid2, absent := reg.Add(second, "x")
	if absent || pid2.Id != "x" {
		t.Fatalf("second Add = %v, %v; want pid x, false", pid2, absent)
	}
	if got, ok := reg.GetLocal("x"); !ok || got != first {
		t.Fatalf("GetLocal(x) = %v, %v; want the first process", got, ok)
	}
}

func TestProcessRegistryMissesGoToDeadLetter(t *testing.T) {
	system := quietSystem()
	reg := system.ProcessRegistry

	if p, ok := reg.Get(nil); ok || p != system.DeadLetter {
		t.Errorf("Get(nil) = %v, %v; want dead letter, false", p, ok)
	}
	if p, ok := reg.Get(NewPID(reg.Address, "nobody")); ok || p != system.DeadLetter {
		t.Errorf("Get(unknown) = %v, %v; want dead letter, false", p, ok)
	}
	if p, ok := reg.GetLocal("nobody"); ok || p != system.DeadLetter {
		t.Errorf("GetLocal(unknown) = %v, %v; want dead letter, false", p, ok)
	}
	if p, ok := reg.Get(NewPID("elsewhere:1", "x")); ok || p != system.DeadLetter {
		t.Errorf("Get(remote, no resolver) = %v, %v; want dead letter, false", p, ok)
	}

	remote := &stubProcess{"remote"}
	reg.RegisterAddressResolver(func(*PID) (Process, bool) { return remote, true })
	if p, ok := reg.Get(NewPID("elsewhere:1", "x")); !ok || p != remote {
		t.Errorf("Get(remote) = %v, %v; want the resolver's process", p, ok)
	}
}

func TestProcessRegistryRemoveMarksActorDead(t *testing.T) {
	reg := quietSystem().ProcessRegistry
	proc := NewActorProcess(nil)
	pid, _ := reg.Add(proc, "a")

	reg.Remove(pid)
	if _, ok := reg.Get(pid); ok {
		t.Fatal("Get after Remove found the process")
	}
	if proc.dead != 1 {
		t.Fatal("Remove left the actor process alive")
	}
	reg.Remove(pid) // removing twice is harmless
	if _, absent := reg.Add(&stubProcess{}, "a"); !absent {
		t.Fatal("the id of a removed process cannot be reused")
	}
}

func TestProcessMapShrinksAfterMostEntriesGo(t *testing.T) {
	m := &ProcessMap{items: make(map[string]Process)}
	p := &stubProcess{}
	n := 4 * shrinkFloor
	for i := 0; i < n; i++ {
		m.SetIfAbsent(strconv.Itoa(i), p)
	}
	if m.peak != n {
		t.Fatalf("peak = %d after %d adds", m.peak, n)
	}

	before := m.items
	keep := n/4 - 1 // the rebuild happens when fewer than a quarter of the peak remain
	for i := keep; i < n; i++ {
		m.Pop(strconv.Itoa(i))
	}
	if sameMap(m.items, before) {
		t.Fatalf("%d of %d entries left: shard map not rebuilt", m.Count(), n)
	}
	if m.peak != m.Count() || m.Count() != keep {
		t.Fatalf("after rebuild: peak %d, count %d; want both %d", m.peak, m.Count(), keep)
	}
	for i := 0; i < keep; i++ {
		if got, ok := m.Get(strconv.Itoa(i)); !ok || got != p {
			t.Fatalf("entry %d lost in the rebuild", i)
		}
	}
}

func TestProcessMapSmallShardsAreNotRebuilt(t *testing.T) {
	m := &ProcessMap{items: make(map[string]Process)}
	for i := 0; i < shrinkFloor-1; i++ {
		m.SetIfAbsent(strconv.Itoa(i), &stubProcess{})
	}
	before := m.items
	for i := 0; i < shrinkFloor-1; i++ {
		m.Pop(strconv.Itoa(i))
	}
	if !sameMap(m.items, before) {
		t.Fatal("a shard that never reached shrinkFloor entries was rebuilt")
	}
}

// TestProcessRegistryReturnsMemory fills the registry with 200,000 processes and removes them:
// the heap must fall back to near where it started. With maps that never shrink it keeps
// megabytes.
func TestProcessRegistryReturnsMemory(t *testing.T) {
	reg := quietSystem().ProcessRegistry
	own := reg.LocalPIDs.Count() // the system's own: dead letter, event stream
	base := heapAfterGC()

	const n = 200000
	p := &stubProcess{}
	pids := make([]*PID, n)
	for i := range pids {
		pids[i], _ = reg.Add(p, "m"+strconv.Itoa(i))
	}
	full := heapAfterGC()
	for _, pid := range pids {
		reg.Remove(pid)
	}
	pids = nil
	empty := heapAfterGC()

	if n := reg.LocalPIDs.Count(); n != own {
		t.Fatalf("registry holds %d processes after removing all; want the system's %d", n, own)
	}
	grown, kept := int64(full)-int64(base), int64(empty)-int64(base)
	t.Logf("heap: base %d, full %d, empty %d", base, full, empty)
	if grown < 5<<20 {
		t.Fatalf("200,000 processes grew the heap by only %d bytes: the measurement is off", grown)
	}
	if kept > grown/10 {
		t.Fatalf("after removing every process the registry keeps %d of the %d bytes it grew", kept, grown)
	}
}

func TestProcessRegistryConcurrentUse(t *testing.T) {
	reg := quietSystem().ProcessRegistry
	own := reg.LocalPIDs.Count()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			p := &stubProcess{}
			for round := 0; round < 3; round++ {
				pids := make([]*PID, 2000)
				for i := range pids {
					pid, absent := reg.Add(p, strconv.Itoa(g)+"/"+reg.NextId())
					if !absent {
						t.Errorf("fresh id %s taken", pid.Id)
					}
					pids[i] = pid
				}
				for _, pid := range pids {
					if got, ok := reg.Get(pid); !ok || got != p {
						t.Errorf("%s not found while other goroutines add and remove", pid.Id)
					}
					reg.Remove(pid)
				}
			}
		}(g)
	}
	wg.Wait()
	if n := reg.LocalPIDs.Count(); n != own {
		t.Fatalf("registry holds %d processes; want the system's %d", n, own)
	}
}

func TestProcessMapFillsACacheLine(t *testing.T) {
	if size := unsafe.Sizeof(ProcessMap{}); size != 64 {
		t.Fatalf("ProcessMap is %d bytes; adjust its padding to 64", size)
	}
}

func sameMap(a, b map[string]Process) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
