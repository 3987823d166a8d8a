//go:build race

package procmem

// raceEnabled: the race detector keeps shadow memory for every allocation, so a heap reserve
// would be resident (ReserveHeap makes none).
const raceEnabled = true
