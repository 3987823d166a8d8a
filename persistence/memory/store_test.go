package memory_test

import (
	"testing"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/persistence/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) persistence.Store { return memory.New() })
}
