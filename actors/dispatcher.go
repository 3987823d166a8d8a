package actors

import (
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// pooledDispatcher runs actors' mailboxes on goroutines that are kept for a while after a
// run, instead of protoactor's default of a new goroutine each time a mailbox gets work. A
// new goroutine starts on a small stack, and a Receive that encodes JSON or commits to
// bbolt grows it by copying, every time: with the default, stack growth was a large share of
// the gateway's CPU under steady load (BENCHMARKS.md). A kept goroutine keeps its stack.
//
// Schedule never waits: the work goes to an idle worker if one is waiting, else to a new
// one, so an actor can never be held up behind another. Workers beyond maxIdle, and any
// idle longer than idleFor, exit: an idle gateway keeps none.
type pooledDispatcher struct {
	work       chan func() // unbuffered: a send succeeds only when a worker is waiting
	idle       atomic.Int32
	maxIdle    int32
	idleFor    time.Duration
	throughput int
}

var _ actor.Dispatcher = (*pooledDispatcher)(nil)

func newPooledDispatcher(throughput int, maxIdle int32, idleFor time.Duration) *pooledDispatcher {
	return &pooledDispatcher{work: make(chan func()), maxIdle: maxIdle, idleFor: idleFor, throughput: throughput}
}

// mailboxes is the dispatcher of every reef actor. 300 messages per run of a mailbox is
// protoactor's default throughput.
var mailboxes = newPooledDispatcher(300, 16, 5*time.Second)

func (d *pooledDispatcher) Schedule(fn func()) {
	select {
	case d.work <- fn:
	default:
		go d.run(fn)
	}
}

func (d *pooledDispatcher) Throughput() int { return d.throughput }

// run runs fn, then waits for more work while the pool is not full of idle workers.
func (d *pooledDispatcher) run(fn func()) {
	var timer *time.Timer
	for {
		fn()
		if d.idle.Add(1) > d.maxIdle {
			d.idle.Add(-1)
			return
		}
		if timer == nil {
			timer = time.NewTimer(d.idleFor)
		} else {
			timer.Reset(d.idleFor)
		}
		select {
		case fn = <-d.work:
			d.idle.Add(-1)
		case <-timer.C:
			d.idle.Add(-1)
			return
		}
	}
}
