package bolt

import (
	"testing"

	"github.com/reefgw/reef/persistence"
)

func TestUpgradesCoverEveryFormat(t *testing.T) {
	if len(upgrades) != persistence.Format {
		t.Fatalf("%d upgrade steps; want one for each format 0..%d", len(upgrades), persistence.Format-1)
	}
	for i, u := range upgrades {
		if u.from != i {
			t.Errorf("upgrades[%d] is from format %d; want %d", i, u.from, i)
		}
	}
	for f := 2; f <= persistence.Format; f++ {
		if persistence.FormatRelease[f] == "" {
			t.Errorf("persistence.FormatRelease has no release for format %d", f)
		}
	}
}
