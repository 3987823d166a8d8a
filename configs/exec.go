package configs

// Upper bounds of tools.exec.background: past them a typo (an extra zero, bytes for
// megabytes) would let the agent hold the machine's memory or process table.
const (
	maxExecBackgroundRunning  = 1024
	maxExecBackgroundTotal    = 4096
	maxExecBackgroundKept     = 1024
	maxExecBackgroundKeepMins = 7 * 24 * 60 // a week
	minExecBackgroundOutput   = 1 << 10
	maxExecBackgroundOutput   = 64 << 20
)

// validateExecBackground checks tools.exec.background after defaults: every value positive
// and within its bound, and a conversation's share no larger than the gateway's.
func (c *Config) validateExecBackground(v *validator) {
	b := c.Tools.Exec.Background
	for _, l := range []struct {
		key       string
		n, lo, hi int
	}{
		{"maxRunning", b.MaxRunning, 1, maxExecBackgroundRunning},
		{"maxTotal", b.MaxTotal, 1, maxExecBackgroundTotal},
		{"maxKept", b.MaxKept, 1, maxExecBackgroundKept},
		{"keepFinishedMinutes", b.KeepFinishedMinutes, 1, maxExecBackgroundKeepMins},
		{"outputBytes", b.OutputBytes, minExecBackgroundOutput, maxExecBackgroundOutput},
	} {
		switch {
		case l.n < 0:
			v.addf("tools.exec.background.%s: %d is negative: use 0 for the default or a number from %d to %d", l.key, l.n, l.lo, l.hi)
		case l.n < l.lo || l.n > l.hi:
			v.addf("tools.exec.background.%s: %d is out of range: use a number from %d to %d (0 for the default)", l.key, l.n, l.lo, l.hi)
		}
	}
	if b.MaxRunning > 0 && b.MaxTotal > 0 && b.MaxRunning > b.MaxTotal {
		v.addf("tools.exec.background.maxRunning: %d is above tools.exec.background.maxTotal (%d): lower it or raise maxTotal",
			b.MaxRunning, b.MaxTotal)
	}
}
