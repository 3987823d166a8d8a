package persistence_test

import (
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
)

// TestShownKeepsEachSessionsExchangesInOrder: a session's command exchanges come back
// oldest first, and never another session's (one key a prefix of the other included).
func TestShownKeepsEachSessionsExchangesInOrder(t *testing.T) {
	st := memory.New()
	t0 := time.Unix(1_700_000_000, 0)
	err := st.Update(func(tx persistence.Tx) error {
		for _, w := range []struct {
			key string
			s   persistence.Shown
		}{
			{"a", persistence.Shown{Command: "/help", Answer: "commands", Time: t0.Add(2 * time.Second)}},
			{"a", persistence.Shown{Command: "/status", Answer: "Session: a", Time: t0}},
			{"ab", persistence.Shown{Command: "/status", Answer: "Session: ab", Time: t0.Add(time.Second)}},
		} {
			if err := persistence.PutShown(tx, w.key, w.s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []persistence.Shown
	if err := st.View(func(r persistence.Reader) (err error) { got, err = persistence.ShownOf(r, "a"); return err }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Command != "/status" || got[1].Command != "/help" || !got[0].Time.Equal(t0) {
		t.Errorf("shown of a = %+v", got)
	}
}
