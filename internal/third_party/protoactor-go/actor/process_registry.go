package actor

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

type ProcessRegistryValue struct {
	SequenceID     uint64
	ActorSystem    *ActorSystem
	Address        string
	LocalPIDs      *SliceMap
	RemoteHandlers []AddressResolver
}

// reef patch: upstream's SliceMap was 1,024 concurrent-maps of 32 shards each (32,768 Go maps,
// ~66,000 allocations and 2.9 MB before the first spawn), and Go maps never give memory back.
// This one is a fixed, small number of shards that shrink once most of their entries are gone.

const (
	// processShards is the number of shards: a power of two, enough that goroutines on many
	// cores rarely contend for one lock.
	processShards = 64

	// shrinkFloor is the peak size below which a shard is never rebuilt: small maps cost
	// little, and rebuilding them would be churn.
	shrinkFloor = 128
)

// SliceMap holds the local processes, spread over shards by a hash of the id.
type SliceMap struct {
	LocalPIDs []*ProcessMap
	seed      maphash.Seed
}

// ProcessMap is one shard: a map guarded by a lock. When its size falls under a quarter of
// the peak it has held since it was last built (and that peak is at least shrinkFloor) it
// copies what is left into a new map, so the old map's memory can be collected.
type ProcessMap struct {
	mu    sync.RWMutex
	items map[string]Process
	peak  int
	_     [24]byte // pad to 64 bytes: shards sit on cache lines of their own
}

func newSliceMap() *SliceMap {
	sm := &SliceMap{
		LocalPIDs: make([]*ProcessMap, processShards),
		seed:      maphash.MakeSeed(),
	}

	for i := 0; i < len(sm.LocalPIDs); i++ {
		sm.LocalPIDs[i] = &ProcessMap{items: make(map[string]Process)}
	}

	return sm
}

func (s *SliceMap) GetBucket(key string) *ProcessMap {
	hash := maphash.String(s.seed, key)

	return s.LocalPIDs[hash&(processShards-1)]
}

// Count returns the number of processes in all shards.
func (s *SliceMap) Count() int {
	n := 0
	for _, m := range s.LocalPIDs {
		n += m.Count()
	}

	return n
}

// Count returns the number of processes in the shard.
func (m *ProcessMap) Count() int {
	m.mu.RLock()
	defer m.mu.RUnlock()

	return len(m.items)
}

// Get returns the process registered under id.
func (m *ProcessMap) Get(id string) (Process, bool) {
	m.mu.RLock()
	p, ok := m.items[id]
	m.mu.RUnlock()

	return p, ok
}

// SetIfAbsent registers p under id unless id is taken, and reports whether it did.
func (m *ProcessMap) SetIfAbsent(id string, p Process) bool {
	m.mu.Lock()
	defer m.mu.Unlock()

	if _, ok := m.items[id]; ok {
		return false
	}

	m.items[id] = p
	if len(m.items) > m.peak {
		m.peak = len(m.items)
	}

	return true
}

// Pop removes the process registered under id and returns it.
func (m *ProcessMap) Pop(id string) (Process, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()

	p, ok := m.items[id]
	if !ok {
		return nil, false
	}

	delete(m.items, id)
	if m.peak >= shrinkFloor && len(m.items) < m.peak/4 {
		m.rebuild()
	}

	return p, true
}

// rebuild copies the shard into a map sized for what it holds now. Called with mu held.
func (m *ProcessMap) rebuild() {
	items := make(map[string]Process, len(m.items))
	for id, p := range m.items {
		items[id] = p
	}

	m.items = items
	m.peak = len(items)
}

const (
	localAddress = "nonhost"
)

func NewProcessRegistry(actorSystem *ActorSystem) *ProcessRegistryValue {
	return &ProcessRegistryValue{
		ActorSystem: actorSystem,
		Address:     localAddress,
		LocalPIDs:   newSliceMap(),
	}
}

// An AddressResolver is used to resolve remote actors
type AddressResolver func(*PID) (Process, bool)

func (pr *ProcessRegistryValue) RegisterAddressResolver(handler AddressResolver) {
	pr.RemoteHandlers = append(pr.RemoteHandlers, handler)
}

const (
	digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ~+"
)

func uint64ToId(u uint64) string {
	var buf [13]byte
	i := 13
	// base is power of 2: use shifts and masks instead of / and %
	for u >= 64 {
		i--
		buf[i] = digits[uintptr(u)&0x3f]
		u >>= 6
	}
	// u < base
	i--
	buf[i] = digits[uintptr(u)]
	i--
	buf[i] = '$'

	return string(buf[i:])
}

func (pr *ProcessRegistryValue) NextId() string {
	counter := atomic.AddUint64(&pr.SequenceID, 1)

	return uint64ToId(counter)
}

func (pr *ProcessRegistryValue) Add(process Process, id string) (*PID, bool) {
	bucket := pr.LocalPIDs.GetBucket(id)

	return &PID{
		Address: pr.Address,
		Id:      id,
	}, bucket.SetIfAbsent(id, process)
}

func (pr *ProcessRegistryValue) Remove(pid *PID) {
	bucket := pr.LocalPIDs.GetBucket(pid.Id)

	ref, _ := bucket.Pop(pid.Id)
	if l, ok := ref.(*ActorProcess); ok {
		atomic.StoreInt32(&l.dead, 1)
	}
}

func (pr *ProcessRegistryValue) Get(pid *PID) (Process, bool) {
	if pid == nil {
		return pr.ActorSystem.DeadLetter, false
	}

	if pid.Address != localAddress && pid.Address != pr.Address {
		for _, handler := range pr.RemoteHandlers {
			ref, ok := handler(pid)
			if ok {
				return ref, true
			}
		}

		return pr.ActorSystem.DeadLetter, false
	}

	bucket := pr.LocalPIDs.GetBucket(pid.Id)
	ref, ok := bucket.Get(pid.Id)

	if !ok {
		return pr.ActorSystem.DeadLetter, false
	}

	return ref, true
}

func (pr *ProcessRegistryValue) GetLocal(id string) (Process, bool) {
	bucket := pr.LocalPIDs.GetBucket(id)
	ref, ok := bucket.Get(id)

	if !ok {
		return pr.ActorSystem.DeadLetter, false
	}

	return ref, true
}
