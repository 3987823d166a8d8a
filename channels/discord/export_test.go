package discord

import "time"

// SetReconnectWaits replaces the pauses between attempts to resume, so that tests can see
// Run give up quickly.
func (b *Bot) SetReconnectWaits(waits ...time.Duration) { b.reconnectWaits = waits }

// SetIdentifyEvery replaces Discord's identify interval per rate limit key (5 s), so that
// tests with several shards start quickly against a fake with a shorter window.
func (b *Bot) SetIdentifyEvery(d time.Duration) { b.idents.every = d }

// SetSpreadEvery replaces how often a node in a cluster checks its share of the shards.
func (b *Bot) SetSpreadEvery(d time.Duration) { b.spreadEvery = d }
