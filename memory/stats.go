package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/reefgw/reef/persistence"
)

// Stats describe an index: what `reef memory status` shows.
type Stats struct {
	Agent    string    `json:"agent"`
	Files    int       `json:"files"`
	Skipped  int       `json:"skipped"`            // files not indexed (too large, binary)
	Sessions int       `json:"sessions,omitempty"` // conversations indexed (sources: [sessions])
	Chunks   int       `json:"chunks"`
	Vectors  int       `json:"vectors"`
	Provider string    `json:"provider"`
	Model    string    `json:"model,omitempty"`
	Dims     int       `json:"dims,omitempty"`
	LastSync time.Time `json:"lastSync,omitzero"`
	Bytes    int       `json:"bytes"` // keys and values stored for the index (the embedding cache included)
	// Since this process started:
	Reindexed  int    `json:"reindexed"`  // files read and written again
	Rebuilds   int    `json:"rebuilds"`   // whole rebuilds (damage, model change)
	EmbedCalls int    `json:"embedCalls"` // embeddings requests
	Embedded   int    `json:"embedded"`   // texts sent to be embedded
	CacheHits  int    `json:"cacheHits"`  // texts found in the embedding cache
	EmbedError string `json:"embedError,omitempty"`
	Scans      int    `json:"scans"` // stat scans of every note (the rest came from the watcher)
	// Watching says how notes changed outside reef are seen: "inotify", or the periodic scan
	// and why ("scan every 2s: ...").
	Watching string `json:"watching"`
}

// Status syncs the index and describes it.
func (x *Index) Status(ctx context.Context) (Stats, error) {
	if err := x.Sync(ctx); err != nil {
		return Stats{}, err
	}
	x.mu.Lock()
	st := x.stats
	st.Agent, st.Provider, st.Model = x.cfg.AgentID, x.cfg.Provider, x.cfg.Model
	if err := x.ensureLoaded(); err != nil {
		x.mu.Unlock()
		return Stats{}, err
	}
	st.Chunks, st.Vectors, st.Dims = x.m.live, x.m.nvec, x.m.state.Dims
	st.LastSync, st.EmbedError = x.synced, x.embedWhy
	st.Watching = "inotify"
	if x.cfg.Shared {
		st.Watching = "scan at every search (shared workspace)"
	} else if x.watch == nil {
		st.Watching = "scan every " + x.cfg.ScanEvery.String()
		if x.watchErr != nil {
			st.Watching += ": " + x.watchErr.Error()
		}
	}
	x.mu.Unlock()
	err := x.store.View(func(r persistence.Reader) error {
		err := r.Scan(x.b.files, "", func(p string, v []byte) error {
			var f struct{ Skipped string }
			if err := json.Unmarshal(v, &f); err != nil {
				return fmt.Errorf("%w: file %s: %v", errDamaged, p, err)
			}
			if IsSessionPath(p) {
				st.Sessions++
			} else {
				st.Files++
			}
			if f.Skipped != "" {
				st.Skipped++
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, b := range append(x.b.index(), x.b.cache) {
			if err := r.Scan(b, "", func(k string, v []byte) error { st.Bytes += len(k) + len(v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}
