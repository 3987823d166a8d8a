package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// checkpointEvery bounds how often the checkpoint is saved (a channel new to it is saved at
// once).
const checkpointEvery = 2 * time.Second

// stateTimeout bounds one read or write of a SharedState.
const stateTimeout = 10 * time.Second

// SharedState keeps a bot's checkpoint where every node of a cluster reads it (the cluster's
// database), so that the node that takes a shard over reads what came since the last message
// any node handled, also the messages the node before it received and never stored.
type SharedState interface {
	// Load returns the stored checkpoint, nil when there is none.
	Load(ctx context.Context) ([]byte, error)
	// Update replaces the stored checkpoint with merge(old) in one transaction.
	Update(ctx context.Context, merge func(old []byte) ([]byte, error)) error
}

// checkpoint is the newest message id of each channel that reef has handled (delivered and
// stored, or ignored), kept in Config.StateFile or, in a cluster, Config.State. Discord
// replays nothing to a new session, so after a restart or a takeover the bot reads what came
// meanwhile in these channels (session.go). A checkpoint a little behind only makes the bot
// read messages again, which dedup drops; one ahead would lose messages, so it moves only
// after a message was handled. With each channel it keeps the channel's guild, which says
// whose shard reads the channel's gap.
type checkpoint struct {
	path   string      // "" and no shared: keeps nothing
	shared SharedState // a cluster's: replaces path

	mu    sync.Mutex
	last  map[string]string // channel → newest handled message id
	guild map[string]string // channel → its guild, where known
	dirty bool
	saved time.Time
}

// loadCheckpoint reads the checkpoint from shared, or else from path; nothing stored is an
// empty checkpoint.
func loadCheckpoint(path string, shared SharedState) (*checkpoint, error) {
	c := &checkpoint{path: path, shared: shared, last: map[string]string{}, guild: map[string]string{}}
	raw, err := c.read()
	if err != nil || raw == nil {
		return c, err
	}
	if err := c.decode(raw, c.last, c.guild); err != nil {
		return c, fmt.Errorf("discord: the stored state is damaged (%v); it is started afresh", err)
	}
	return c, nil
}

// read returns the stored checkpoint, nil when there is none.
func (c *checkpoint) read() ([]byte, error) {
	if c.shared != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
		defer cancel()
		raw, err := c.shared.Load(ctx)
		if err != nil {
			return nil, fmt.Errorf("discord: read state: %w", err)
		}
		return raw, nil
	}
	if c.path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(c.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discord: read state: %w", err)
	}
	return raw, nil
}

// decode reads the stored form: a JSON object of channel → "id" or "id:guild".
func (c *checkpoint) decode(raw []byte, last, guild map[string]string) error {
	var stored map[string]string
	if err := json.Unmarshal(raw, &stored); err != nil {
		return err
	}
	for channel, v := range stored {
		id, g, ok := strings.Cut(v, ":")
		last[channel] = id
		if ok {
			guild[channel] = g
		}
	}
	return nil
}

// encode writes the stored form of last and guild. Callers hold c.mu.
func encode(last, guild map[string]string) ([]byte, error) {
	stored := make(map[string]string, len(last))
	for channel, id := range last {
		if g, ok := guild[channel]; ok && g != "" {
			id += ":" + g
		}
		stored[channel] = id
	}
	return json.Marshal(stored)
}

// snapshot returns a copy of the channels and their newest handled ids.
func (c *checkpoint) snapshot() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]string, len(c.last))
	for k, v := range c.last {
		out[k] = v
	}
	return out
}

// handled notes that message id of channel (of guild, "" for a DM) was handled, and saves
// now and then.
func (c *checkpoint) handled(channel, guild, id string) error {
	c.mu.Lock()
	last, known := c.last[channel]
	if known && !newer(id, last) {
		c.mu.Unlock()
		return nil
	}
	if !known && len(c.last) >= maxCachedChannels {
		c.mu.Unlock()
		return nil
	}
	c.last[channel] = id
	if guild != "" {
		c.guild[channel] = guild
	}
	c.dirty = true
	due := !known || time.Since(c.saved) >= checkpointEvery
	c.mu.Unlock()
	if due {
		return c.save()
	}
	return nil
}

// arrived notes message id of a channel new to the checkpoint as it arrives, before reef has
// it: the channel's gap then starts just before it, so a restart or the node taking the shard
// over reads it again if this node stops before reef stored it. A known channel is left as it
// is (it moves only as messages are handled).
func (c *checkpoint) arrived(channel, guild, id string) error {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 {
		return nil
	}
	c.mu.Lock()
	if _, known := c.last[channel]; known || len(c.last) >= maxCachedChannels {
		c.mu.Unlock()
		return nil
	}
	c.last[channel] = strconv.FormatUint(n-1, 10)
	if guild != "" {
		c.guild[channel] = guild
	}
	c.dirty = true
	c.mu.Unlock()
	return c.save()
}

// save writes the checkpoint if it changed: to a temporary file renamed over path, or into
// the shared state merged with what other nodes saved (the newer id of each channel wins).
func (c *checkpoint) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty || c.path == "" && c.shared == nil {
		return nil
	}
	if c.shared != nil {
		if err := c.saveShared(); err != nil {
			return fmt.Errorf("discord: save state: %w", err)
		}
	} else if err := c.saveFile(); err != nil {
		return fmt.Errorf("discord: save state: %w", err)
	}
	c.dirty, c.saved = false, time.Now()
	return nil
}

func (c *checkpoint) saveFile() error {
	raw, err := encode(c.last, c.guild)
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.path)
}

func (c *checkpoint) saveShared() error {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	return c.shared.Update(ctx, func(old []byte) ([]byte, error) {
		last, guild := map[string]string{}, map[string]string{}
		if old != nil {
			if err := c.decode(old, last, guild); err != nil {
				last, guild = map[string]string{}, map[string]string{} // damaged: ours replaces it
			}
		}
		for channel, id := range c.last {
			if prev, ok := last[channel]; !ok && len(last) >= maxCachedChannels || ok && !newer(id, prev) {
				continue
			}
			last[channel] = id
		}
		for channel, g := range c.guild {
			guild[channel] = g
		}
		return encode(last, guild)
	})
}

// refresh reads the shared checkpoint again (a cluster node taking a shard over): what any
// node handled, and the guild of each channel.
func (c *checkpoint) refresh() (last, guild map[string]string, err error) {
	if c.shared == nil {
		return nil, nil, nil
	}
	raw, err := c.read()
	if err != nil || raw == nil {
		return nil, nil, err
	}
	last, guild = map[string]string{}, map[string]string{}
	if err := c.decode(raw, last, guild); err != nil {
		return nil, nil, fmt.Errorf("discord: the stored state is damaged: %w", err)
	}
	return last, guild, nil
}
