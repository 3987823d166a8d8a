package discord

import "time"

// SetReconnectWaits replaces the pauses between attempts to resume, so that tests can see
// Run give up quickly.
func (b *Bot) SetReconnectWaits(waits ...time.Duration) { b.reconnectWaits = waits }
