package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// stored are the store's inbox and outbox rows: the changes of the transactions committed
// through Store since start, plus, once primed, what the store held before.
type stored struct {
	// gate is held shared by Store.Update from before its commit until its changes are
	// counted, and alone by prime until its read transaction has begun, so that every commit
	// is counted either in the primed base or as a change, never both.
	gate   sync.RWMutex
	inbox  atomic.Int64
	outbox atomic.Int64

	primeMu sync.Mutex
	primed  atomic.Bool
}

// Store wraps s so that the transactions committed through it are counted: inbox rows
// appended (messages in, by channel; reef's own events are not counted as messages) and
// deleted (the queue depth), outbox rows (replies out, by channel; the backlog), and each
// commit's latency. Reads pass through.
func (m *Metrics) Store(s persistence.Store) persistence.Store { return &store{Store: s, m: m} }

type store struct {
	persistence.Store
	m *Metrics
}

// Unreachable passes on the wrapped store's persistence.Reachability (a zero time: none).
func (s *store) Unreachable() (time.Time, error) {
	if r, ok := s.Store.(persistence.Reachability); ok {
		return r.Unreachable()
	}
	return time.Time{}, nil
}

func (s *store) Update(fn func(persistence.Tx) error) error {
	st := &s.m.stored
	var d delta
	st.gate.RLock()
	start := time.Now()
	err := s.Store.Update(func(tx persistence.Tx) error {
		d = delta{}
		return fn(&countingTx{Tx: tx, d: &d})
	})
	if err == nil {
		st.inbox.Add(d.inbox)
		st.outbox.Add(d.outbox)
	}
	st.gate.RUnlock()
	s.m.commits.observe(time.Since(start))
	if err != nil {
		s.m.commitErrs.Add(1)
		return err
	}
	for _, c := range d.in {
		s.m.messagesIn.add(1, c)
	}
	for _, c := range d.out {
		s.m.messagesOut.add(1, c)
	}
	return nil
}

// delta is what one transaction changed.
type delta struct {
	inbox, outbox int64
	in, out       []string // the channels of the messages in and replies out
}

// countingTx notes the inbox and outbox changes of a transaction.
type countingTx struct {
	persistence.Tx
	d *delta
}

// Unwrap returns the store's own transaction, for packages that act on it directly (the
// cluster's fencing check, postgres.Underlying).
func (t *countingTx) Unwrap() persistence.Tx { return t.Tx }

func (t *countingTx) AppendInbox(key string, in messages.Inbound) (uint64, error) {
	seq, err := t.Tx.AppendInbox(key, in)
	if err == nil {
		t.d.inbox++
		if !in.System {
			t.d.in = append(t.d.in, in.Channel)
		}
	}
	return seq, err
}

func (t *countingTx) DeleteInbox(key string, seq uint64) error {
	err := t.Tx.DeleteInbox(key, seq)
	if err == nil {
		t.d.inbox--
	}
	return err
}

func (t *countingTx) AppendOutbox(key string, out messages.Outbound) (uint64, error) {
	seq, err := t.Tx.AppendOutbox(key, out)
	if err == nil {
		t.d.outbox++
		t.d.out = append(t.d.out, out.Channel)
	}
	return seq, err
}

func (t *countingTx) DeleteOutbox(key string, seq uint64) error {
	err := t.Tx.DeleteOutbox(key, seq)
	if err == nil {
		t.d.outbox--
	}
	return err
}

// DeleteSession counts the rows that go with the session.
func (t *countingTx) DeleteSession(key string) error {
	in, err := t.Tx.Inbox(key)
	if err != nil {
		return err
	}
	out, err := t.Tx.Outbox(key)
	if err != nil {
		return err
	}
	if err := t.Tx.DeleteSession(key); err != nil {
		return err
	}
	t.d.inbox -= int64(len(in))
	t.d.outbox -= int64(len(out))
	return nil
}

// RowCounter counts the store's inbox and outbox rows in one read transaction, calling
// began once the transaction has begun (bolt.Store.Counts).
type RowCounter func(began func()) (inbox, outbox int, err error)

// Prime adds the inbox and outbox rows the store held before this process's commits to
// the counts (once; later calls do nothing). It takes one pass over the store (seconds with
// 100,000 sessions on a loaded machine), so the gateway runs it in a goroutine after start;
// until it is done /metrics leaves reef_queue_depth and reef_outbox_backlog out rather than
// show a partial count. Writers wait only until its read transaction has begun.
func (m *Metrics) Prime(count RowCounter) error {
	st := &m.stored
	st.primeMu.Lock()
	defer st.primeMu.Unlock()
	if st.primed.Load() {
		return nil
	}
	st.gate.Lock()
	var before [2]int64
	locked := true
	inbox, outbox, err := count(func() {
		before = [2]int64{st.inbox.Load(), st.outbox.Load()}
		st.gate.Unlock()
		locked = false
	})
	if locked {
		st.gate.Unlock()
	}
	if err != nil {
		return err
	}
	// The counts are of the snapshot, which holds every change counted before it began.
	st.inbox.Add(int64(inbox) - before[0])
	st.outbox.Add(int64(outbox) - before[1])
	st.primed.Store(true)
	return nil
}
