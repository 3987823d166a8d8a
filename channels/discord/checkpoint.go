package discord

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// checkpointEvery bounds how often the checkpoint file is rewritten (a channel new to it is
// written at once).
const checkpointEvery = 2 * time.Second

// checkpoint is the newest message id of each channel that reef has handled (delivered and
// stored, or ignored), kept in Config.StateFile. Discord replays nothing to a new process, so
// after a restart the bot reads what came meanwhile in these channels (session.go). A
// checkpoint a little behind only makes the bot read messages again, which dedup drops; one
// ahead would lose messages, so it moves only after a message was handled.
type checkpoint struct {
	path string // "" keeps nothing

	mu    sync.Mutex
	last  map[string]string
	dirty bool
	saved time.Time
}

// loadCheckpoint reads path; a missing file is an empty checkpoint.
func loadCheckpoint(path string) (*checkpoint, error) {
	c := &checkpoint{path: path, last: map[string]string{}}
	if path == "" {
		return c, nil
	}
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("discord: read state: %w", err)
	}
	if err := json.Unmarshal(raw, &c.last); err != nil {
		return c, fmt.Errorf("discord: state file %s is damaged (%v); it is started afresh", path, err)
	}
	return c, nil
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

// handled notes that message id of channel was handled, and saves now and then.
func (c *checkpoint) handled(channel, id string) error {
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
	c.dirty = true
	due := !known || time.Since(c.saved) >= checkpointEvery
	c.mu.Unlock()
	if due {
		return c.save()
	}
	return nil
}

// save writes the checkpoint if it changed (write to a temporary file, then rename).
func (c *checkpoint) save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.path == "" || !c.dirty {
		return nil
	}
	raw, err := json.Marshal(c.last)
	if err != nil {
		return err
	}
	tmp := c.path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("discord: save state: %w", err)
	}
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("discord: save state: %w", err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("discord: save state: %w", err)
	}
	c.dirty, c.saved = false, time.Now()
	return nil
}
