package actors

import (
	"container/heap"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/schedule"
)

// Timer wakes agents: it fires cron jobs and heartbeats. It keeps one min-heap of wake-ups
// and one clock timer armed for the earliest; a fired timer comes back as a message to self.
// Jobs live in the store (cron/jobs, cron/next, cron/runs); a run is recorded in the same
// transaction as the inbox entry it creates, so a restart never runs it twice. Receive reads
// the store directly (bbolt View) but writes only through Storage, from goroutines it owns.
type Timer struct {
	deps     *Deps
	set      TimerSettings
	storage  *actor.PID
	router   *actor.PID
	root     *actor.RootContext
	clock    Clock
	log      zerolog.Logger
	cancel   chan struct{} // closed on stop: ends the enqueue goroutines
	jobs     map[string]*schedule.Job
	wakes    wakeHeap
	gens     map[string]uint64 // key → generation; heap entries of older generations are stale
	armSeq   uint64
	armedAt  time.Time
	disarm   func() bool
	running  map[string]*cronRun // key ("job:<id>", "hb:<agent>") → run in flight
	waiting  []pendingFire       // due jobs waiting for a free slot
	polling  bool
	beats    map[string]*beatState // by agent id
	seqFires uint64
	passive  bool          // in a cluster, another node fires (timer_cluster.go)
	leadGen  uint64        // the lead goroutine's generation; older ones' messages are dropped
	leadDone chan struct{} // closed when the lead goroutine ended (its lease given back)
}

// TimerSettings configure the Timer.
type TimerSettings struct {
	// Heartbeats by agent id; an agent without an entry gets the defaults (every 30 min, always).
	Heartbeats        map[string]HeartbeatSettings
	MaxJobsPerAgent   int           // default 200
	MaxConcurrentRuns int           // cron runs in flight at once; the rest wait (default 4)
	CatchUpSpread     time.Duration // missed jobs run once after downtime, spread over this (default 5 s)
	PollEvery         time.Duration // how often runs in flight are checked for completion (default 500 ms)
	Refresh           time.Duration // in a cluster, how often jobs changed on other nodes are read (default 5 s)
}

// WithDefaults fills the zero fields with the defaults (what the Timer uses).
func (s TimerSettings) WithDefaults() TimerSettings { return s.withDefaults() }

func (s TimerSettings) withDefaults() TimerSettings {
	if s.MaxJobsPerAgent <= 0 {
		s.MaxJobsPerAgent = 200
	}
	if s.MaxConcurrentRuns <= 0 {
		s.MaxConcurrentRuns = 4
	}
	if s.CatchUpSpread <= 0 {
		s.CatchUpSpread = 5 * time.Second
	}
	if s.PollEvery <= 0 {
		s.PollEvery = 500 * time.Millisecond
	}
	if s.Refresh <= 0 {
		s.Refresh = defaultRefresh
	}
	return s
}

// Timer self-messages.
type (
	timerWake    struct{ seq uint64 }
	timerPoll    struct{}
	pendingFire  struct{ id, reason string }
	cronEnqueued struct {
		key, sessionKey string
		err             error
	}
)

func jobKey(id string) string { return "job:" + id }

// TimerProps is the recipe for the Timer.
// Its settings are the live ones (Settings.Timer), read at every start and when a reload
// changes them (timer_reload.go).
func TimerProps(deps *Deps, storage, router *actor.PID) *actor.Props {
	log := deps.Log.With().Str("actor", "timer").Logger()
	return actor.PropsFromProducer(func() actor.Actor {
		return &Timer{deps: deps, set: deps.live().Timer.withDefaults(), storage: storage, router: router, clock: deps.clock(), log: log}
	}, actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)))
}

func (t *Timer) Receive(ctx actor.Context) {
	var err error
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		err = t.onStarted(ctx)
	case *timerWake:
		t.onWake(ctx, msg)
	case *cronEnqueued:
		t.onEnqueued(ctx, msg)
	case *timerPoll:
		t.onPoll(ctx)
	case *cronRequest:
		t.onRequest(ctx, msg)
	case *beatRead:
		t.onBeatRead(ctx, msg)
	case *beatOutcome:
		t.onBeatOutcome(msg)
	case *settingsChanged:
		t.onSettingsChanged(ctx) // timer_reload.go
	case *beatPausesRequest:
		msg.reply <- t.beatPauses()
	case *timerLead:
		err = t.onLead(ctx, msg) // timer_cluster.go
	case *timerRefresh:
		err = t.onRefresh(ctx)
	case *actor.Stopping, *actor.Restarting:
		t.stop()
	}
	if err != nil {
		ev := t.log.Error()
		if errors.Is(err, persistence.ErrUnavailable) { // a storage outage: Storage logs it once
			ev = t.log.Debug()
		}
		ev.Err(err).Str("msg", fmt.Sprintf("%T", ctx.Message())).Msg("timer")
	}
}

// onStarted loads the jobs, schedules each at its next run, and gives every job whose run
// was missed (the gateway was down) one catch-up run, spread over CatchUpSpread.
func (t *Timer) onStarted(ctx actor.Context) error {
	t.jobs, t.gens, t.running, t.beats = map[string]*schedule.Job{}, map[string]uint64{}, map[string]*cronRun{}, map[string]*beatState{}
	t.wakes, t.waiting, t.polling, t.disarm = nil, nil, false, nil
	t.cancel, t.root = make(chan struct{}), ctx.ActorSystem().Root
	var jobs []schedule.Job
	err := t.deps.Store.View(func(r persistence.Reader) error {
		var err error
		jobs, err = schedule.ListJobs(r)
		return err
	})
	if err != nil {
		return fmt.Errorf("timer: load jobs: %w", err)
	}
	for i := range jobs {
		t.jobs[jobs[i].ID] = &jobs[i]
	}
	if t.clustered() { // fires only once it holds the cluster's timer
		t.passive = true
		t.startLead(ctx)
		return nil
	}
	t.begin(ctx, jobs)
	return nil
}

// begin schedules every job at its next run, gives each whose run was missed one catch-up
// run, spread over CatchUpSpread, and starts the heartbeats.
func (t *Timer) begin(ctx actor.Context, jobs []schedule.Job) {
	now := t.clock.Now()
	missed := 0
	for _, w := range schedule.Resume(jobs, now, t.set.CatchUpSpread) {
		t.schedule(jobKey(w.JobID), w.At, w.Reason)
		if w.Reason == "catch-up" {
			missed++
		}
	}
	if missed > 0 {
		t.log.Info().Int("jobs", missed).Msg("cron jobs missed while reef was down: one catch-up run each")
	}
	t.startBeats(now)
	t.arm(ctx)
}

func (t *Timer) stop() {
	if t.disarm != nil {
		t.disarm()
		t.disarm = nil
	}
	if t.cancel != nil {
		close(t.cancel)
		t.cancel = nil
	}
	t.waitLead()
}

// schedule puts a wake-up for key at at, replacing any earlier one for key.
func (t *Timer) schedule(key string, at time.Time, reason string) {
	t.gens[key]++
	heap.Push(&t.wakes, wake{at: at, key: key, gen: t.gens[key], reason: reason})
}

// unschedule drops key's pending wake-up.
func (t *Timer) unschedule(key string) { t.gens[key]++ }

// arm sets the clock timer to the earliest live wake-up.
func (t *Timer) arm(ctx actor.Context) {
	if t.passive {
		return
	}
	for len(t.wakes) > 0 && t.wakes[0].gen != t.gens[t.wakes[0].key] {
		heap.Pop(&t.wakes)
	}
	if len(t.wakes) == 0 {
		return
	}
	at := t.wakes[0].at
	if t.disarm != nil && at.Equal(t.armedAt) {
		return
	}
	if t.disarm != nil {
		t.disarm()
	}
	t.armSeq++
	seq, self, root := t.armSeq, ctx.Self(), ctx.ActorSystem().Root
	t.armedAt = at
	t.disarm = t.clock.AfterFunc(max(at.Sub(t.clock.Now()), 0), func() { root.Send(self, &timerWake{seq: seq}) })
}

// onWake handles every wake-up that is due, then re-arms.
func (t *Timer) onWake(ctx actor.Context, msg *timerWake) {
	if msg.seq == t.armSeq {
		t.disarm = nil
	}
	now := t.clock.Now()
	for len(t.wakes) > 0 && !t.wakes[0].at.After(now) {
		w := heap.Pop(&t.wakes).(wake)
		if w.gen != t.gens[w.key] {
			continue
		}
		if agentID, ok := beatAgent(w.key); ok {
			t.onBeat(ctx, agentID, now)
		} else {
			t.due(ctx, w.key[len("job:"):], w.reason)
		}
	}
	t.arm(ctx)
}

// wake is one entry of the Timer's heap.
type wake struct {
	at     time.Time
	key    string // "job:<id>" or "hb:<agentId>"
	gen    uint64
	reason string
}

type wakeHeap []wake

func (h wakeHeap) Len() int           { return len(h) }
func (h wakeHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h wakeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)        { *h = append(*h, x.(wake)) }
func (h *wakeHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}
