package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ProcessConfig bounds the background processes of exec (background, yieldMs) and the
// process tool. Zero fields take the defaults shown; reef.yaml sets them under
// tools.exec.background (configs checks their ranges).
type ProcessConfig struct {
	MaxRunning   int           // running at once per session, default 4
	MaxTotal     int           // running at once in the whole gateway, default 32
	MaxKept      int           // finished processes a session keeps for poll and log, default 16
	KeepFinished time.Duration // how long a finished process is kept, default 1 h
	OutputBytes  int           // output kept per process (its last bytes), default 1 MiB
	Now          func() time.Time
}

func (c ProcessConfig) withDefaults() ProcessConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxRunning, 4)
	def(&c.MaxTotal, 32)
	def(&c.MaxKept, 16)
	def(&c.OutputBytes, 1<<20)
	if c.KeepFinished <= 0 {
		c.KeepFinished = time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Exited tells a session that one of its background processes ended by itself (exit, crash
// or its own timeout), not killed by the agent, /stop, /new or shutdown. Tail is the end of
// its output: the command's, so untrusted.
type Exited struct {
	SessionKey string
	ID         string
	Command    string
	Status     string // "exit code 0", "killed by signal ...", "timed out after 60s; ..."
	Failed     bool
	Runtime    time.Duration
	Tail       string
	Tools      []string // the tools of the run that started it (tools.Env.Tools)
}

// Processes owns every background process of the gateway: it starts them (for exec), keeps
// their output in a bounded ring, caps how many run per session and in all, and kills them
// on the session's /stop and /new, when a sub-agent's session ends, on their own timeout and
// at shutdown (Close). Each process is watched by one goroutine Processes starts and waits for
// in Close. Safe for concurrent use.
type Processes struct {
	cfg ProcessConfig

	mu     sync.Mutex
	procs  map[string]*proc // by id
	next   int
	notify func(Exited)
	track  Tracker
	closed bool
	wg     sync.WaitGroup
}

// NewProcesses returns an empty owner. It starts nothing.
func NewProcesses(cfg ProcessConfig) *Processes {
	return &Processes{cfg: cfg.withDefaults(), procs: map[string]*proc{}}
}

// SetNotify sets where the exits of background processes are reported (the gateway puts a
// system event into the process's session). Until it is set, exits are not reported.
func (m *Processes) SetNotify(fn func(Exited)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notify = fn
}

// Running is a background process as a Tracker hears of it.
type Running struct {
	SessionKey string
	ID         string
	Command    string
	Started    time.Time
	Tools      []string
}

// Tracker hears when a background process starts (or a running one goes to the background)
// and when it ends, whatever the reason; the gateway keeps the running ones durably, so that
// after a crash their sessions learn that a restart stopped them. Its methods must not block
// for long: they run on the exec call and the watching goroutine.
type Tracker interface {
	Started(Running)
	Ended(sessionKey, id string)
}

// SetTracker sets who hears of background processes starting and ending; nil: nobody.
func (m *Processes) SetTracker(t Tracker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.track = t
}

// tracked tells the tracker that p runs in the background now.
func (m *Processes) tracked(p *proc) {
	m.mu.Lock()
	t := m.track
	m.mu.Unlock()
	if t == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock() // held across Started: the watcher's Ended cannot come first
	if !p.ended.IsZero() {
		return
	}
	p.tracked = true
	t.Started(Running{SessionKey: p.session, ID: p.id, Command: p.command, Started: p.started, Tools: slices.Clone(p.tools)})
}

// launched is a command the exec tool started for a proc.
type launched struct {
	pid   int
	stdin *os.File                            // the write end of its standard input
	wait  func() (status string, failed bool) // after the command and its tree ended
}

// Kill reasons: none of them is reported to the session (the agent or the user did it).
const (
	byAgent    = "killed by the agent (process kill)"
	byStop     = "killed by /stop"
	byReset    = "killed: the session ended"
	byShutdown = "killed: reef is shutting down"
)

// errProcessLimit is returned when a session or the gateway runs as many processes as allowed.
var errProcessLimit = errors.New("exec: process limit")

// start registers a process of session and launches it with launch under a context that ends
// at timeout or when the process is killed. A background process's end is reported; a
// process that is not becomes one when detached.
func (m *Processes) start(session, command string, runTools []string, timeout time.Duration, background bool,
	launch func(ctx context.Context, out io.Writer) (launched, error)) (*proc, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("reef is shutting down; no new process was started")
	}
	mine, all := 0, 0
	for _, p := range m.procs {
		if p.running() {
			all++
			if p.session == session {
				mine++
			}
		}
	}
	if mine >= m.cfg.MaxRunning || all >= m.cfg.MaxTotal {
		m.mu.Unlock()
		// The message names the limit hit and its reef.yaml key: the model may tell the
		// owner, who may want to raise it.
		limit := fmt.Sprintf("this conversation already runs as many background processes as it may (%d; tools.exec.background.maxRunning: %d)",
			mine, m.cfg.MaxRunning)
		if mine < m.cfg.MaxRunning {
			limit = fmt.Sprintf("the gateway already runs as many background processes as it may (%d; tools.exec.background.maxTotal: %d)",
				all, m.cfg.MaxTotal)
		}
		return nil, fmt.Errorf("%w: not started: %s; kill one (process kill) or wait for one to end", errProcessLimit, limit)
	}
	m.next++
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	p := &proc{id: "p" + strconv.Itoa(m.next), session: session, command: command, started: m.cfg.Now(),
		out: newRing(m.cfg.OutputBytes), done: make(chan struct{}), timeout: timeout, cancel: cancel,
		background: background, tools: slices.Clone(runTools)}
	m.procs[p.id] = p
	m.wg.Add(1)
	m.mu.Unlock()

	l, err := launch(ctx, p.out)
	if err != nil {
		cancel()
		p.finish(m.cfg.Now(), "not started: "+err.Error(), true, false) // a poll waiting on it returns
		m.forget(p)
		m.wg.Done()
		return nil, err
	}
	p.mu.Lock()
	p.pid, p.stdin = l.pid, l.stdin
	p.mu.Unlock()
	if background {
		m.tracked(p)
	}
	go m.watch(ctx, p, l)
	return p, nil
}

// watch waits for p's end, records it and reports it when the session should hear of it.
func (m *Processes) watch(ctx context.Context, p *proc, l launched) {
	defer m.wg.Done()
	status, failed := "exit status unknown", true
	func() {
		defer func() {
			if r := recover(); r != nil {
				status = fmt.Sprintf("exit status unknown (reef failed watching it: %v)", r)
			}
		}()
		status, failed = l.wait()
	}()
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	p.cancel()
	m.mu.Lock()
	notify, track := m.notify, m.track
	m.mu.Unlock()
	report := p.finish(m.cfg.Now(), status, failed, timedOut)
	if report && notify != nil {
		notify(p.exited())
	}
	p.mu.Lock()
	wasTracked := p.tracked
	p.mu.Unlock()
	if wasTracked && track != nil {
		track.Ended(p.session, p.id) // after the report, which removes the record with the event it stores
	}
	m.prune()
}

// get returns the process id of session.
func (m *Processes) get(session, id string) (*proc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.procs[id]
	if p == nil || p.session != session {
		return nil, fmt.Errorf("no process %q in this session (process list shows them)", id)
	}
	return p, nil
}

// list returns the processes of session, oldest first, after dropping those kept too long.
func (m *Processes) list(session string) []*proc {
	m.prune()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*proc
	for _, p := range m.procs {
		if p.session == session {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *proc) int { return a.started.Compare(b.started) })
	return out
}

// forget drops a process from the list (its record only: a running one is killed first).
func (m *Processes) forget(p *proc) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.procs, p.id)
}

// KillSession kills every running process of session (/stop, /new, a sub-agent's end) and
// returns how many it killed. It does not wait for them: each dies with its whole tree.
func (m *Processes) KillSession(session string, stop bool) int {
	reason := byReset
	if stop {
		reason = byStop
	}
	n := 0
	for _, p := range m.list(session) {
		if p.kill(reason) {
			n++
		}
	}
	return n
}

// Running returns how many processes of session are running, for /status.
func (m *Processes) Running(session string) int {
	n := 0
	for _, p := range m.list(session) {
		if p.running() {
			n++
		}
	}
	return n
}

// Close kills every process and waits, up to wait, until each has ended. Later starts fail.
func (m *Processes) Close(wait time.Duration) error {
	m.mu.Lock()
	m.closed = true
	all := make([]*proc, 0, len(m.procs))
	for _, p := range m.procs {
		all = append(all, p)
	}
	m.mu.Unlock()
	for _, p := range all {
		p.kill(byShutdown)
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("exec: background processes still running after %s", wait)
	}
}

// prune drops finished processes past KeepFinished, and the oldest finished ones of a session
// that keeps more than MaxKept.
func (m *Processes) prune() {
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	finished := map[string][]*proc{}
	for id, p := range m.procs {
		ended, ok := p.endedAt()
		if !ok {
			continue
		}
		if now.Sub(ended) > m.cfg.KeepFinished {
			delete(m.procs, id)
			continue
		}
		finished[p.session] = append(finished[p.session], p)
	}
	for _, ps := range finished {
		if len(ps) <= m.cfg.MaxKept {
			continue
		}
		slices.SortFunc(ps, startOrder)
		for _, p := range ps[:len(ps)-m.cfg.MaxKept] {
			delete(m.procs, p.id)
		}
	}
}

// startOrder orders processes by start, then by id (p2 before p10): starts in the same clock
// tick are not left to the map's order.
func startOrder(a, b *proc) int {
	if c := a.started.Compare(b.started); c != 0 {
		return c
	}
	if len(a.id) != len(b.id) {
		return len(a.id) - len(b.id)
	}
	return strings.Compare(a.id, b.id)
}
