// Package metrics counts what reef does and serves it at /metrics in Prometheus' text format
// (version 0.0.4), written by hand: the format is a few lines of text, and a client library
// would add a dependency tree and start-up work for nothing reef needs.
//
// Counters are fed where the work already passes, without new hooks in the runtime:
//   - Store wraps the persistence.Store the actors write through: messages in (inbox rows
//     appended, by channel), replies out (outbox rows, by channel), the queue depth (inbox rows
//     not yet answered), the outbox backlog, stored sessions, and each commit's latency;
//   - Provider wraps a model client: each call's latency and its tokens, by provider and model;
//   - Watch observes the run-event bus: runs by outcome, tool calls by tool and outcome,
//     sub-agents running;
//   - the Runtime given to Handler answers, at scrape time, live sessions and connector
//     restarts.
//
// A scrape reads atomics and small maps, and counts the stored sessions' names (a cursor,
// 7 ms with 100,000 sessions). What the store held before this process started is counted
// once, by Prime, which the gateway runs in the background after start.
//
// Concurrency: every method is safe for concurrent use. Increments are atomic adds; a new
// label value takes a mutex once.
package metrics

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics holds reef's counters. Use New.
type Metrics struct {
	messagesIn  counterVec // channel
	messagesOut counterVec // channel
	runs        counterVec // outcome
	toolCalls   counterVec // tool, outcome
	modelCalls  histogramVec
	modelErrors counterVec // provider, model
	tokens      counterVec // provider, model, kind
	commits     *histogram
	commitErrs  atomic.Uint64
	subagents   atomic.Int64
	dropped     atomic.Value // func() uint64: the bus's dropped events, once Watch was called

	stored stored // inbox, outbox and session counts (store.go)

	apiRequests counterVec // key: the OpenAI-compatible API's requests by key name
}

// APIRequest counts a request to the OpenAI-compatible API by the name of its key
// ("gateway" for the gateway token).
func (m *Metrics) APIRequest(key string) { m.apiRequests.add(1, key) }

// New returns empty metrics.
func New() *Metrics {
	return &Metrics{commits: newHistogram(commitBuckets)}
}

// Buckets, in seconds.
var (
	modelBuckets  = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
	commitBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
)

// counterVec is a counter per label values (joined by labelSep).
type counterVec struct {
	mu sync.RWMutex
	m  map[string]*atomic.Uint64
}

const labelSep = "\x00"

func (c *counterVec) add(n uint64, labels ...string) {
	key := joinLabels(labels)
	c.mu.RLock()
	v := c.m[key]
	c.mu.RUnlock()
	if v == nil {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*atomic.Uint64{}
		}
		if v = c.m[key]; v == nil {
			v = new(atomic.Uint64)
			c.m[key] = v
		}
		c.mu.Unlock()
	}
	v.Add(n)
}

// snapshot returns the label keys in order with their values.
func (c *counterVec) snapshot() ([]string, []uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keys := make([]string, 0, len(c.m))
	for k := range c.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]uint64, len(keys))
	for i, k := range keys {
		vals[i] = c.m[k].Load()
	}
	return keys, vals
}

func joinLabels(labels []string) string {
	switch len(labels) {
	case 0:
		return ""
	case 1:
		return labels[0]
	}
	n := len(labels) - 1
	for _, l := range labels {
		n += len(l)
	}
	b := make([]byte, 0, n)
	for i, l := range labels {
		if i > 0 {
			b = append(b, labelSep...)
		}
		b = append(b, l...)
	}
	return string(b)
}

// histogram counts observations into cumulative buckets (upper bounds in seconds).
type histogram struct {
	bounds []float64
	counts []atomic.Uint64 // per bucket, not cumulative; the last is +Inf
	sumNS  atomic.Int64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := sort.SearchFloat64s(h.bounds, s) // the first bound >= s
	h.counts[i].Add(1)
	h.sumNS.Add(int64(d))
}

// histogramVec is a histogram per label values.
type histogramVec struct {
	mu sync.RWMutex
	m  map[string]*histogram
}

func (v *histogramVec) get(bounds []float64, labels ...string) *histogram {
	key := joinLabels(labels)
	v.mu.RLock()
	h := v.m[key]
	v.mu.RUnlock()
	if h != nil {
		return h
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]*histogram{}
	}
	if h = v.m[key]; h == nil {
		h = newHistogram(bounds)
		v.m[key] = h
	}
	return h
}

func (v *histogramVec) snapshot() ([]string, []*histogram) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	keys := make([]string, 0, len(v.m))
	for k := range v.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	hs := make([]*histogram, len(keys))
	for i, k := range keys {
		hs[i] = v.m[k]
	}
	return keys, hs
}
