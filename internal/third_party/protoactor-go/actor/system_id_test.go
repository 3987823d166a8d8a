package actor

import "testing"

func TestNewSystemIDIsRandomAndShort(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		id := newSystemID()
		if len(id) != 22 {
			t.Fatalf("system ID %q has %d characters; want 22", id, len(id))
		}
		if seen[id] {
			t.Fatalf("system ID %q repeated", id)
		}
		seen[id] = true
	}
}
