package actors

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// HeartbeatSettings say when the Timer wakes an agent to look at its HEARTBEAT.md.
type HeartbeatSettings struct {
	Every time.Duration // default 30 min; negative disables heartbeats
	// ActiveStart and ActiveEnd ("09:00", "22:00") bound the hours heartbeats run, in
	// ActiveZone (default the agent's Location). Empty: all day. End before start spans midnight.
	ActiveStart, ActiveEnd string
	ActiveZone             *time.Location
	// Target is the session key heartbeats run in; "" or "last" is the agent's most recently
	// used direct conversation, whose last channel gets the replies; "none" runs there but
	// delivers nothing.
	Target string
}

// defaultBeatEvery is how often an agent's heartbeat runs when its settings do not say.
const defaultBeatEvery = 30 * time.Minute

// beatState is the Timer's record of one agent's heartbeats.
type beatState struct {
	set     HeartbeatSettings
	busy    bool     // a heartbeat event is waiting for its answer
	pending []string // next-heartbeat jobs due
	sent    int      // heartbeat events enqueued
	skipped int      // heartbeats that found nothing to do (no LLM call)
	lastAt  time.Time
	paused  string // why heartbeats are paused ("" = running): the provider rejects the key
	main    string // the agent's main session: the owner's direct chat that ran last ("" = not known yet)
	// noMainLogged: a heartbeat was skipped for want of a main session, and said so once.
	noMainLogged bool
}

// beatOutcome is what a Session reports when a run ended.
type beatOutcome struct {
	agentID string
	authErr error  // the provider rejected the key (401/403)
	reached bool   // the run reached the model
	direct  string // the session's key when the owner's direct message ran: the agent's main session now
}

// beatPausesRequest asks the Timer which agents' heartbeats are paused, and why.
type beatPausesRequest struct{ reply chan<- map[string]string }

// onBeatOutcome pauses an agent's heartbeats while its provider rejects the key, so a broken
// key does not cost a failed call every interval; the next successful run resumes them.
func (t *Timer) onBeatOutcome(msg *beatOutcome) {
	b := t.beat(msg.agentID)
	if msg.direct != "" {
		b.main = msg.direct
	}
	switch {
	case msg.authErr != nil && b.paused == "":
		b.paused = "the model provider rejects the API key (" + msg.authErr.Error() + "); fix it and restart reef, or talk to the agent once it works"
		t.log.Warn().Str("agent", msg.agentID).Err(msg.authErr).Msg("heartbeats paused: the provider rejects the API key")
	case msg.reached && b.paused != "":
		b.paused = ""
		t.log.Info().Str("agent", msg.agentID).Msg("heartbeats resumed")
	}
}

func (t *Timer) beatPauses() map[string]string {
	out := map[string]string{}
	for id, b := range t.beats {
		if b.paused != "" {
			out[id] = b.paused
		}
	}
	return out
}

// beatRead is what the heartbeat goroutine found: HEARTBEAT.md's content and the session.
type beatRead struct {
	agentID, sessionKey string
	info                persistence.SessionInfo
	empty               bool
	err                 error
}

func beatAgent(key string) (string, bool) { return strings.CutPrefix(key, "hb:") }

func (t *Timer) beat(agentID string) *beatState {
	b := t.beats[agentID]
	if b == nil {
		set := t.set.Heartbeats[agentID]
		if set.Every == 0 {
			set.Every = defaultBeatEvery
		}
		b = &beatState{set: set}
		t.beats[agentID] = b
	}
	return b
}

// startBeats schedules every agent's first heartbeat one interval from now.
func (t *Timer) startBeats(now time.Time) {
	for _, a := range t.deps.agents() {
		if b := t.beat(a.ID); b.set.Every > 0 {
			t.schedule("hb:"+a.ID, now.Add(b.set.Every), "heartbeat")
		}
	}
}

// onBeat handles one heartbeat: due next-heartbeat jobs fire; inside active hours, unless
// the previous heartbeat is still unanswered, a goroutine reads HEARTBEAT.md.
func (t *Timer) onBeat(ctx actor.Context, agentID string, now time.Time) {
	b := t.beat(agentID)
	t.schedule("hb:"+agentID, now.Add(b.set.Every), "heartbeat")
	b.lastAt = now
	pending := b.pending
	b.pending = nil
	for _, id := range pending {
		t.due(ctx, id, "heartbeat")
	}
	a := t.deps.agent(agentID)
	if a == nil || b.busy || b.paused != "" || !active(b.set, a, now) {
		return
	}
	b.busy = true
	target := b.set.Target
	if target == "" || target == "last" || target == "none" {
		target = t.mainSession(agentID)
	}
	self, root, store, ws := ctx.Self(), ctx.ActorSystem().Root, t.deps.Store, a.Workspace
	go func() {
		res := &beatRead{agentID: agentID, sessionKey: target}
		defer func() {
			if r := recover(); r != nil {
				res.err = fmt.Errorf("heartbeat: panic: %v", r)
			}
			root.Send(self, res)
		}()
		text, err := readHeartbeat(ws)
		res.empty, res.err = agent.HeartbeatEmpty(text), err
		if target != "" && !res.empty {
			res.err = errors.Join(res.err, store.View(func(r persistence.Reader) error {
				res.info, _, err = r.Session(target)
				return err
			}))
		}
	}()
}

// onBeatRead enqueues the heartbeat event when HEARTBEAT.md has tasks; otherwise no LLM call.
func (t *Timer) onBeatRead(ctx actor.Context, msg *beatRead) {
	b := t.beat(msg.agentID)
	if msg.err != nil {
		t.log.Warn().Err(msg.err).Str("agent", msg.agentID).Msg("heartbeat")
	}
	if msg.err == nil && !msg.empty && msg.sessionKey == "" && !b.noMainLogged {
		// Never a guest's chat instead: the owner has to write first (mainSession).
		b.noMainLogged = true
		t.log.Info().Str("agent", msg.agentID).Msg("heartbeat skipped: no main session yet (the owner has not written in a direct chat)")
	}
	if msg.err != nil || msg.empty || msg.sessionKey == "" {
		b.busy = false
		b.skipped++
		return
	}
	b.sent++
	now := t.clock.Now()
	// The owner's in the owner's main session; in a session heartbeat.target names, the
	// owner's only if the owner used it.
	standing := sessionStanding(msg.info)
	if b.set.Target == "none" {
		msg.info = persistence.SessionInfo{}
	}
	in := messages.Inbound{System: true, Source: "heartbeat", SessionKey: msg.sessionKey, Time: now,
		Standing: standing, ChatType: messages.ChatDirect, Channel: msg.info.Channel, Account: msg.info.Account,
		ChatID: msg.info.ChatID, ThreadID: msg.info.ThreadID,
		Text: "[Heartbeat] Read HEARTBEAT.md in your workspace and do what it asks now. Do not bring back old " +
			"tasks from earlier conversations. If nothing needs the user's attention, reply exactly " + HeartbeatOK +
			". Current time: " + now.UTC().Format("2006-01-02 15:04") + " UTC."}
	t.running["hb:"+msg.agentID] = &cronRun{sessionKey: msg.sessionKey, source: "heartbeat", started: time.Now()}
	t.enqueue(ctx, "hb:"+msg.agentID, in, nil)
}

// readHeartbeat reads the first 64 KiB of HEARTBEAT.md; a missing file has no tasks.
func readHeartbeat(workspace string) (string, error) {
	f, err := os.Open(filepath.Join(workspace, agent.FileHeartbeat))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("heartbeat: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	return string(b), err
}

// active reports whether now is inside the heartbeat's active hours.
func active(set HeartbeatSettings, a *Agent, now time.Time) bool {
	if set.ActiveStart == "" && set.ActiveEnd == "" {
		return true
	}
	loc := set.ActiveZone
	if loc == nil {
		loc = a.Location
	}
	if loc == nil {
		loc = time.Local
	}
	start, end := minutesOf(set.ActiveStart, 0), minutesOf(set.ActiveEnd, 24*60)
	l := now.In(loc)
	m := l.Hour()*60 + l.Minute()
	if start <= end {
		return m >= start && m < end
	}
	return m >= start || m < end
}

// minutesOf parses "HH:MM" ("24:00" is the end of the day); def when empty or malformed.
func minutesOf(s string, def int) int {
	var h, m int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil || h < 0 || h > 24 || m < 0 || m > 59 {
		return def
	}
	return h*60 + m
}

// mainSession is the agent's main session: the direct chat the owner used last. Heartbeats
// and cron jobs without a session of their own run there with the owner's tools, so it is
// never a guest's chat, whoever wrote last; "" when the owner has not written in a direct
// chat yet (heartbeats are then skipped, cron jobs fail with a log line).
func (t *Timer) mainSession(agentID string) string {
	b := t.beat(agentID)
	if b.main != "" {
		return b.main
	}
	// Not known since reef started: the direct session the owner used last (SessionInfo.OwnerSeen),
	// read once; from then on every owner's run in a direct chat keeps it current (beatOutcome).
	var best persistence.SessionInfo
	err := t.deps.Store.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		for _, info := range infos {
			if info.AgentID == agentID && isDirectKey(agentID, info.Key) && info.OwnerSeen.After(best.OwnerSeen) {
				best = info
			}
		}
		return err
	})
	if err != nil {
		t.log.Error().Err(err).Msg("timer: list sessions")
	}
	b.main = best.Key
	return best.Key
}

// isDirectKey reports whether a session key is a direct chat of agentID (or its shared main session).
func isDirectKey(agentID, key string) bool {
	return strings.Contains(key, ":direct:") || key == "agent:"+agentID+":main"
}

// status is the cron tool's status action: jobs and heartbeats.
func (t *Timer) status(agentID string) map[string]any {
	jobs := t.list(agentID)
	beats := map[string]any{}
	for id, b := range t.beats {
		if agentID == "" || id == agentID {
			var last int64
			if !b.lastAt.IsZero() {
				last = b.lastAt.UnixMilli()
			}
			beats[id] = map[string]any{"everyMs": b.set.Every.Milliseconds(), "sent": b.sent, "skipped": b.skipped,
				"lastAtMs": last, "busy": b.busy, "paused": b.paused}
		}
	}
	return map[string]any{"jobs": len(jobs), "running": t.cronInFlight(), "waiting": len(t.waiting), "heartbeats": beats}
}
