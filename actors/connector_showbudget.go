package actors

import "time"

// On a platform that needs no draft for exactly-once (channels.OnceSender: Slack), a shown
// run's draft is only for the person's sake, and each costs an edit for its answer from the
// account's edit budget (Slack's chat.update: Tier 3, about 50 a minute for the workspace).
// A burst of long runs showing a draft each then makes every answer wait for that budget: 200
// runs of 3 s took three minutes on Slack. So drafts there come from a bucket of their own,
// filled at the account's edit rate (EditLimits.PerSecond) up to draftBurst's worth: past it a
// run is not shown by a draft, and its answer is one new message, at once. A few runs at a time
// always get theirs.

// draftBurst is how many seconds of the account's edit rate the drafts' bucket holds.
const draftBurst = 25

// draftBudget is the Connector's bucket of drafts (used on its actor goroutine only).
type draftBudget struct {
	tokens float64
	at     time.Time
	init   bool
}

// mayDraft reports whether a run that is shown now gets a draft, and takes one if so.
func (c *Connector) mayDraft(now time.Time) bool {
	rate := c.limits.PerSecond
	if rate <= 0 || !c.sendsOnce() {
		return true
	}
	b, size := &c.drafts, rate*draftBurst
	if !b.init {
		b.tokens, b.at, b.init = size, now, true
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(size, b.tokens+rate*d.Seconds())
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
