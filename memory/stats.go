package memory

import (
	"context"
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
	st.Files, st.Chunks, st.Vectors, st.Dims = len(x.cur.files), len(x.cur.chunks), len(x.cur.hasVec), x.cur.state.Dims
	for p, f := range x.cur.files {
		if IsSessionPath(p) {
			st.Files--
			st.Sessions++
		}
		if f.Skipped != "" {
			st.Skipped++
		}
	}
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
		for _, b := range []string{x.b.meta, x.b.files, x.b.chunks, x.b.vectors, x.b.cache} {
			if err := r.Scan(b, "", func(k string, v []byte) error { st.Bytes += len(k) + len(v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	return st, err
}
