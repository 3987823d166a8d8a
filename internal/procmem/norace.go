//go:build !race

package procmem

const raceEnabled = false
