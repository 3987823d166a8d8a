package postgres

import (
	"testing"

	"github.com/reefgw/reef/persistence"
)

func TestUpgradesCoverEveryFormat(t *testing.T) {
	if len(upgrades) != persistence.Format-1 {
		t.Fatalf("%d upgrade steps; want one for each format 1..%d", len(upgrades), persistence.Format-1)
	}
	for i, u := range upgrades {
		if u.from != i+1 {
			t.Errorf("upgrades[%d] is from format %d; want %d", i, u.from, i+1)
		}
	}
}
