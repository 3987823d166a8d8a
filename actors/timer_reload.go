package actors

import "github.com/asynkron/protoactor-go/actor"

// onSettingsChanged takes the live Timer settings after a reload: cron limits at once, and
// each agent's heartbeats. An agent whose heartbeat settings changed (or that is new) gets
// its next heartbeat one new interval from now; a removed or disabled one gets none; the
// others keep their schedule. What a heartbeat in flight was doing it finishes.
func (t *Timer) onSettingsChanged(ctx actor.Context) {
	t.set = t.deps.live().Timer.withDefaults()
	now := t.clock.Now()
	seen := map[string]bool{}
	for _, a := range t.deps.agents() {
		seen[a.ID] = true
		set := t.set.Heartbeats[a.ID]
		if set.Every == 0 {
			set.Every = defaultBeatEvery
		}
		b, had := t.beats[a.ID], t.beats[a.ID] != nil
		if had && b.set == set {
			continue
		}
		b = t.beat(a.ID)
		b.set = set
		if set.Every > 0 {
			t.schedule("hb:"+a.ID, now.Add(set.Every), "heartbeat")
		} else {
			t.unschedule("hb:" + a.ID)
		}
	}
	for id := range t.beats {
		if !seen[id] {
			t.unschedule("hb:" + id)
			delete(t.beats, id)
		}
	}
	t.arm(ctx)
}
