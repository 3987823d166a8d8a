package exec

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// trackLog is a Tracker that keeps what it heard, in order.
type trackLog struct {
	mu     sync.Mutex
	events []string
}

func (l *trackLog) Started(r Running) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, "started "+r.SessionKey+" "+r.ID+" "+r.Command)
}

func (l *trackLog) Ended(session, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, "ended "+session+" "+id)
}

func (l *trackLog) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// TestTrackerHearsBackgroundProcesses: the tracker hears a background process start and end,
// one that goes to the background after yieldMs too, and nothing of a command that ended
// within its yield (an ordinary call's answer). A process killed at shutdown ends as well.
func TestTrackerHearsBackgroundProcesses(t *testing.T) {
	r := newBGRig(t, ProcessConfig{})
	track := &trackLog{}
	r.procs.SetTracker(track)
	bg := idOf(t, r.call(t, r.exec, "s1", "command", "sleep 0.2", "background", true))
	waitLong(t, "the background process's end", func() bool { return len(track.got()) == 2 })
	r.call(t, r.exec, "s1", "command", "echo quick", "yieldMs", 30000)
	slow := idOf(t, r.call(t, r.exec, "s2", "command", "exec sleep 30", "yieldMs", 200))
	if err := r.procs.Close(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	want := []string{"started s1 " + bg + " sleep 0.2", "ended s1 " + bg, "started s2 " + slow + " exec sleep 30", "ended s2 " + slow}
	if got := track.got(); !slices.Equal(got, want) {
		t.Errorf("the tracker heard %q, want %q", got, want)
	}
}
