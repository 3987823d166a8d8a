//go:build race

package procmem

// raceEnabled: the race detector keeps shadow memory for every allocation, so a reserve is
// resident there.
const raceEnabled = true
