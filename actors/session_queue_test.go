package actors

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// accepted is a message with inbox seq seq and text t, on channel "fake".
func accepted(seq uint64, text string) messages.Inbound {
	return messages.Inbound{Channel: "fake", InboxSeq: seq, Text: text}
}

// sameSettings resolves every channel to set.
func sameSettings(set persistence.QueueSettings) queueSettingsFor {
	return func(string) persistence.QueueSettings { return set }
}

func texts(in []messages.Inbound) []string {
	out := []string{}
	for _, m := range in {
		out = append(out, m.Text)
	}
	return out
}

func TestSessionQueueArrive(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	running := runState{turn: true, interruptible: true, mayJoin: true}
	system := accepted(9, "cron")
	system.System = true
	tests := []struct {
		name    string
		set     persistence.QueueSettings
		before  sessionQueue
		in      messages.Inbound
		run     runState
		act     arrival
		dropped bool
		after   sessionQueue
	}{
		{name: "idle: waits for the run the Session starts",
			set: persistence.QueueSettings{Mode: QueueSteer, Cap: 3}, in: accepted(1, "a"), run: runState{idle: true},
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}}},
		{name: "idle while collecting: extends the quiet window",
			set:    persistence.QueueSettings{Mode: QueueCollect, Cap: 3},
			before: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}},
			in:     accepted(2, "b"), run: runState{idle: true, collecting: true},
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a"), accepted(2, "b")}, lastArrival: t0}},
		{name: "steer: sent to the running Turn",
			set: persistence.QueueSettings{Mode: QueueSteer, Cap: 3}, in: accepted(1, "a"), run: running,
			act: arrivalSteer, after: sessionQueue{steering: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
		{name: "steer: a sender with fewer tools than the run (a guest in the owner's run) waits",
			set: persistence.QueueSettings{Mode: QueueSteer, Cap: 3}, in: accepted(1, "a"), run: runState{turn: true, interruptible: true},
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
		{name: "steer: a system event waits",
			set: persistence.QueueSettings{Mode: QueueSteer, Cap: 3}, in: system, run: running,
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{system}, lastArrival: t0}},
		{name: "steer: while a run is recorded (no Turn) it waits",
			set: persistence.QueueSettings{Mode: QueueSteer, Cap: 3}, in: accepted(1, "a"), run: runState{},
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
		{name: "steer: at the cap it waits and the oldest waiting one is dropped",
			set:    persistence.QueueSettings{Mode: QueueSteer, Cap: 2, Drop: DropOld},
			before: sessionQueue{steering: []messages.Inbound{accepted(1, "a")}, waiting: []messages.Inbound{accepted(2, "b")}},
			in:     accepted(3, "c"), run: running, act: arrivalWait, dropped: true,
			after: sessionQueue{steering: []messages.Inbound{accepted(1, "a")}, waiting: []messages.Inbound{accepted(3, "c")},
				discard: []uint64{2}, lastArrival: t0}},
		{name: "steer: at the cap with nothing waiting the new one is dropped",
			set:    persistence.QueueSettings{Mode: QueueSteer, Cap: 1, Drop: DropOld},
			before: sessionQueue{steering: []messages.Inbound{accepted(1, "a")}},
			in:     accepted(2, "b"), run: running, act: arrivalWait, dropped: true,
			after: sessionQueue{steering: []messages.Inbound{accepted(1, "a")}, discard: []uint64{2}, lastArrival: t0}},
		{name: "followup: waits",
			set: persistence.QueueSettings{Mode: QueueFollowup, Cap: 3}, in: accepted(1, "a"), run: running,
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
		{name: "interrupt: cancels the run once",
			set: persistence.QueueSettings{Mode: QueueInterrupt, Cap: 3}, in: accepted(1, "a"), run: running,
			act: arrivalInterrupt, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0, interrupted: true}},
		{name: "interrupt: an interrupted run is not cancelled again",
			set:    persistence.QueueSettings{Mode: QueueInterrupt, Cap: 3},
			before: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, interrupted: true},
			in:     accepted(2, "b"), run: running,
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a"), accepted(2, "b")}, lastArrival: t0, interrupted: true}},
		{name: "interrupt: a /compact is not interrupted",
			set: persistence.QueueSettings{Mode: QueueInterrupt, Cap: 3}, in: accepted(1, "a"), run: runState{turn: true},
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
		{name: "interrupt: a system event does not interrupt",
			set: persistence.QueueSettings{Mode: QueueInterrupt, Cap: 3}, in: system, run: running,
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{system}, lastArrival: t0}},
		{name: "collect: waits and notes the arrival",
			set: persistence.QueueSettings{Mode: QueueCollect, Cap: 3}, in: accepted(1, "a"), run: running,
			act: arrivalWait, after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
		{name: "cap, drop new: the newest goes",
			set:    persistence.QueueSettings{Mode: QueueFollowup, Cap: 2, Drop: DropNew},
			before: sessionQueue{waiting: []messages.Inbound{accepted(1, "a"), accepted(2, "b")}},
			in:     accepted(3, "c"), run: running, dropped: true,
			after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a"), accepted(2, "b")}, discard: []uint64{3}, lastArrival: t0}},
		{name: "cap, drop old: the oldest goes",
			set:    persistence.QueueSettings{Mode: QueueFollowup, Cap: 2, Drop: DropOld},
			before: sessionQueue{waiting: []messages.Inbound{accepted(1, "a"), accepted(2, "b")}},
			in:     accepted(3, "c"), run: running, dropped: true,
			after: sessionQueue{waiting: []messages.Inbound{accepted(2, "b"), accepted(3, "c")}, discard: []uint64{1}, lastArrival: t0}},
		{name: "cap, summarize: the oldest goes with a note of what it said",
			set:    persistence.QueueSettings{Mode: QueueFollowup, Cap: 2, Drop: DropSummarize},
			before: sessionQueue{waiting: []messages.Inbound{accepted(1, "first\n  line"), accepted(2, "b")}},
			in:     accepted(3, "c"), run: running, dropped: true,
			after: sessionQueue{waiting: []messages.Inbound{accepted(2, "b"), accepted(3, "c")}, discard: []uint64{1},
				dropNotes: []string{"- first line"}, lastArrival: t0}},
		{name: "cap: a message without an inbox entry leaves nothing to delete",
			set:    persistence.QueueSettings{Mode: QueueFollowup, Cap: 1, Drop: DropNew},
			before: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}},
			in:     accepted(0, "b"), run: running, dropped: true,
			after: sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: t0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.before
			act, dropped := q.arrive(tt.in, sameSettings(tt.set), func() time.Time { return t0 }, tt.run)
			if act != tt.act || dropped != tt.dropped {
				t.Errorf("arrive = %v, dropped %v; want %v, dropped %v", act, dropped, tt.act, tt.dropped)
			}
			if diff := cmp.Diff(tt.after, q, cmp.AllowUnexported(sessionQueue{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("queue after arrive (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSessionQueueTake(t *testing.T) {
	waiting := []messages.Inbound{accepted(1, "a"), accepted(2, "b"), accepted(3, "c")}
	tests := []struct {
		mode      string
		run, rest []string
	}{
		{mode: QueueFollowup, run: []string{"a"}, rest: []string{"b", "c"}},
		{mode: QueueSteer, run: []string{"a", "b", "c"}, rest: []string{}},
		{mode: QueueCollect, run: []string{"a", "b", "c"}, rest: []string{}},
		{mode: QueueInterrupt, run: []string{"a", "b", "c"}, rest: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			q := sessionQueue{waiting: slices.Clone(waiting)}
			run := q.take(sameSettings(persistence.QueueSettings{Mode: tt.mode}))
			if got := texts(run); !slices.Equal(got, tt.run) {
				t.Errorf("run answers %q, want %q", got, tt.run)
			}
			if got := texts(q.waiting); !slices.Equal(got, tt.rest) {
				t.Errorf("left waiting %q, want %q", got, tt.rest)
			}
			if len(run) > 0 && len(q.waiting) > 0 {
				run = append(run, accepted(9, "x")) // must not overwrite what waits
				if q.waiting[0].Text != tt.rest[0] {
					t.Errorf("appending to the run changed the queue: %q", texts(q.waiting))
				}
			}
		})
	}
}

// TestSessionQueueTakeByChannel: the first waiting message's channel decides the mode.
func TestSessionQueueTakeByChannel(t *testing.T) {
	settings := func(channel string) persistence.QueueSettings {
		if channel == "slow" {
			return persistence.QueueSettings{Mode: QueueFollowup}
		}
		return persistence.QueueSettings{Mode: QueueSteer}
	}
	other := accepted(2, "b")
	other.Channel = "slow"
	q := sessionQueue{waiting: []messages.Inbound{accepted(1, "a"), other}}
	if got := texts(q.take(settings)); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("run answers %q, want both (the first is on a steer channel)", got)
	}
}

func TestSessionQueueHoldFor(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		mode     string
		debounce int // ms
		last     time.Time
		now      time.Time
		want     time.Duration
	}{
		{name: "collect, within the window", mode: QueueCollect, debounce: 500, last: t0, now: t0.Add(200 * time.Millisecond), want: 300 * time.Millisecond},
		{name: "collect, window passed", mode: QueueCollect, debounce: 500, last: t0, now: t0.Add(time.Second), want: 0},
		{name: "collect, exactly at the end", mode: QueueCollect, debounce: 500, last: t0, now: t0.Add(500 * time.Millisecond), want: 0},
		{name: "collect, nothing arrived during a run", mode: QueueCollect, debounce: 500, now: t0, want: 0},
		{name: "collect, no debounce", mode: QueueCollect, debounce: -1, last: t0, now: t0, want: 0},
		{name: "steer never holds", mode: QueueSteer, debounce: 500, last: t0, now: t0, want: 0},
		{name: "followup never holds", mode: QueueFollowup, debounce: 500, last: t0, now: t0, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := sessionQueue{waiting: []messages.Inbound{accepted(1, "a")}, lastArrival: tt.last}
			got := q.holdFor(sameSettings(persistence.QueueSettings{Mode: tt.mode, Debounce: tt.debounce}), func() time.Time { return tt.now })
			if got != tt.want {
				t.Errorf("holdFor = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSessionQueueRequeueSteered(t *testing.T) {
	tests := []struct {
		name     string
		steering []messages.Inbound
		injected []messages.Inbound
		want     []string
	}{
		{name: "all taken in", steering: []messages.Inbound{accepted(1, "a"), accepted(2, "b")},
			injected: []messages.Inbound{accepted(1, "a"), accepted(2, "b")}, want: []string{"w"}},
		{name: "none taken in: back at the head, in order", steering: []messages.Inbound{accepted(1, "a"), accepted(2, "b")},
			want: []string{"a", "b", "w"}},
		{name: "some taken in", steering: []messages.Inbound{accepted(1, "a"), accepted(2, "b")},
			injected: []messages.Inbound{accepted(1, "a")}, want: []string{"b", "w"}},
		{name: "without inbox seqs, by position", steering: []messages.Inbound{accepted(0, "a"), accepted(0, "b")},
			injected: []messages.Inbound{accepted(0, "a")}, want: []string{"b", "w"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := sessionQueue{steering: tt.steering, waiting: []messages.Inbound{accepted(5, "w")}}
			q.requeueSteered(tt.injected)
			if got := texts(q.waiting); !slices.Equal(got, tt.want) {
				t.Errorf("waiting %q, want %q", got, tt.want)
			}
			if len(q.steering) != 0 {
				t.Errorf("steering %q left after the run", texts(q.steering))
			}
		})
	}
}

func TestSessionQueueDropAll(t *testing.T) {
	q := sessionQueue{steering: []messages.Inbound{accepted(1, "a"), accepted(0, "cmd")}, waiting: []messages.Inbound{accepted(2, "b")},
		discard: []uint64{7}, dropNotes: []string{"- x"}}
	q.dropAll()
	if q.len() != 0 || len(q.dropNotes) != 0 {
		t.Errorf("after dropAll: %d messages, notes %q; want none", q.len(), q.dropNotes)
	}
	if got, want := q.takeDiscarded(), []uint64{7, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("discarded %v, want %v", got, want)
	}
	if got := q.takeDiscarded(); got != nil {
		t.Errorf("discarded again: %v, want nothing", got)
	}
}

func TestSessionQueueDropNotes(t *testing.T) {
	q := sessionQueue{}
	set := persistence.QueueSettings{Cap: 1, Drop: DropSummarize}
	q.add(accepted(1, "a"), set)
	q.add(accepted(2, "b"), set)
	q.add(accepted(3, "c"), set)
	if got, want := q.takeDropNotes(), []string{"- a", "- b"}; !slices.Equal(got, want) {
		t.Errorf("notes %q, want %q", got, want)
	}
	if got := q.takeDropNotes(); got != nil {
		t.Errorf("notes again: %q, want none", got)
	}
	if got := texts(q.waiting); !slices.Equal(got, []string{"c"}) {
		t.Errorf("waiting %q, want [c]", got)
	}
}
