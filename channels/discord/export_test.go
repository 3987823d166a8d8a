package discord

import (
	"time"

	"github.com/bwmarrin/discordgo"
)

// SetReconnectWaits replaces the pauses between attempts to resume, so that tests can see
// Run give up quickly.
func (b *Bot) SetReconnectWaits(waits ...time.Duration) { b.reconnectWaits = waits }

// SetIdentifyEvery replaces Discord's identify interval per rate limit key (5 s), so that
// tests with several shards start quickly against a fake with a shorter window.
func (b *Bot) SetIdentifyEvery(d time.Duration) { b.idents.every = d }

// SetSpreadEvery replaces how often a node in a cluster checks its share of the shards.
func (b *Bot) SetSpreadEvery(d time.Duration) { b.spreadEvery = d }

// Seen records a message of channel in guild ("" for a DM) as the gateway would tell it.
func (b *Bot) Seen(channel, guild, id string) {
	m := &discordgo.Message{ID: id, ChannelID: channel, GuildID: guild}
	b.seen(m)
	b.noteGuild(m)
}

// SeenBeforeRestart records a channel's newest message as the state file would, without its
// guild.
func (b *Bot) SeenBeforeRestart(channel, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lastSeen[channel] = id
}

// Served returns the channels whose gap shard id of count reads after a new session.
func (b *Bot) Served(id, count int) map[string]string { return b.served(shard{id, count}) }
