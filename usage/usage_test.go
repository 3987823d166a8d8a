package usage_test

import (
	"math"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/usage"
)

func TestLedgerAddsAndReports(t *testing.T) {
	store := memory.New()
	add := func(k usage.Key, u messages.Usage) {
		t.Helper()
		if err := store.Update(func(tx persistence.Tx) error { return usage.Add(tx, k, u) }); err != nil {
			t.Fatal(err)
		}
	}
	a := usage.Key{Day: "2026-12-05", Agent: "main", Model: "openai/gpt", Channel: "telegram"}
	b := usage.Key{Day: "2026-12-06", Agent: "main", Model: "local/llama", Channel: ""}
	add(a, messages.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 400_000})
	add(a, messages.Usage{InputTokens: 1_000_000})
	add(b, messages.Usage{InputTokens: 500, OutputTokens: 50})
	add(usage.Key{Day: "2026-11-01", Agent: "main", Model: "openai/gpt"}, messages.Usage{InputTokens: 7}) // out of range
	var rows []usage.Row
	if err := store.View(func(r persistence.Reader) (err error) {
		rows, err = usage.Read(r, "2026-12-01", "2026-12-06")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rep := usage.Build(rows, map[string]usage.Price{"openai/gpt": {Input: 2, Output: 8, CacheRead: 0.5}}, "2026-12-04", "2026-12-06")
	// 1.6M fresh input × 2 + 0.4M cached × 0.5 + 0.1M output × 8 = 3.2 + 0.2 + 0.8
	if got := rep.Total.Cost; math.Abs(got-4.2) > 1e-9 || rep.Total.Priced {
		t.Errorf("total cost %v priced %v, want 4.2 and not all priced (llama has no price)", got, rep.Total.Priced)
	}
	if len(rep.Days) != 3 || rep.Days[0].Total() != 0 || rep.Days[1].InputTokens != 2_000_000 || rep.Days[2].InputTokens != 500 {
		t.Errorf("days: %+v", rep.Days)
	}
	if len(rep.Models) != 2 || rep.Models[0].Name != "openai/gpt" || !rep.Models[0].Priced || rep.Models[1].Priced {
		t.Errorf("models: %+v", rep.Models)
	}
	if len(rep.Channels) != 2 || rep.Channels[1].Name != "(none)" {
		t.Errorf("channels: %+v", rep.Channels)
	}
	if from, to := usage.Range(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC), 7); from != "2026-11-30" || to != "2026-12-06" {
		t.Errorf("Range: %s..%s", from, to)
	}
}
