package schedule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
)

func TestOffline(t *testing.T) {
	store := memory.New()
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	do := func(action string, a Args) (json.RawMessage, error) {
		t.Helper()
		return Offline(store, "main", action, a, at)
	}
	index := func() []string {
		t.Helper()
		var keys []string
		if err := store.View(func(r persistence.Reader) error {
			return r.Scan(bucketNext, "", func(k string, _ []byte) error { keys = append(keys, k); return nil })
		}); err != nil {
			t.Fatal(err)
		}
		return keys
	}

	out, err := do("add", Args{Job: &JobInput{Name: "standup", Schedule: &Spec{Kind: "cron", Expr: "0 9 * * *"},
		Payload: &Payload{Kind: "systemEvent", Text: "standup"}}})
	if err != nil {
		t.Fatal(err)
	}
	var added Job
	if err := json.Unmarshal(out, &added); err != nil {
		t.Fatal(err)
	}
	wantNext := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC).UnixMilli()
	if added.AgentID != "main" || added.SessionKey != "" || added.State.NextRunAtMs != wantNext || !added.Enabled {
		t.Errorf("added %+v, want agent main, no session, next %d", added, wantNext)
	}
	if got := index(); len(got) != 1 || got[0] != nextKey(wantNext, added.ID) {
		t.Errorf("next-run index %v after add", got)
	}

	off := false
	out, err = do("update", Args{ID: added.ID, Patch: &JobInput{Enabled: &off}})
	if err != nil || !strings.Contains(string(out), `"enabled":false`) {
		t.Fatalf("disable: %s, %v", out, err)
	}
	if got := index(); len(got) != 0 {
		t.Errorf("a disabled job stays in the next-run index: %v", got)
	}
	if out, err = do("list", Args{}); err != nil || !strings.Contains(string(out), added.ID) {
		t.Errorf("list: %s, %v", out, err)
	}
	if out, err = do("runs", Args{ID: added.ID}); err != nil || string(out) != "[]" {
		t.Errorf("runs: %s, %v", out, err)
	}

	for _, tt := range []struct {
		action string
		args   Args
		want   string
	}{
		{"run", Args{ID: added.ID}, "needs a running reef"},
		{"add", Args{}, "add needs job"},
		{"add", Args{Job: &JobInput{Schedule: &Spec{Kind: "every", EveryMs: 1000}, Payload: &Payload{Kind: "systemEvent", Text: "x"}}}, "under one minute"},
		{"update", Args{ID: "nope"}, `no job "nope"`},
		{"update", Args{ID: added.ID, Patch: &JobInput{WakeMode: "later"}}, "wakeMode"},
	} {
		if _, err := do(tt.action, tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %+v: err %v, want %q", tt.action, tt.args, err, tt.want)
		}
	}

	if out, err = do("remove", Args{ID: added.ID}); err != nil || !strings.Contains(string(out), `"removed":"`+added.ID) {
		t.Errorf("remove: %s, %v", out, err)
	}
	if out, _ = do("list", Args{}); string(out) != "[]" {
		t.Errorf("list after remove: %s", out)
	}
}
