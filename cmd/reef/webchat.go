package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/persistence"
)

// WebChat's side of the web backend (web.ChatBackend): the conversations' records in the
// store, and the models the picker offers.

// chatsBucket holds WebChat's conversation records (web.Chat as JSON) by chat id.
const chatsBucket = "webchat/chats"

// webchatUploads is where WebChat keeps uploaded files until reef fetches them into the
// agent's workspace: under the data directory; in cluster mode in the first agent's
// workspace, which every node shares (the node that runs the chat's session fetches the file,
// and the data directory is each node's own), under inbox/, which only the owner's runs reach.
func webchatUploads(cfg *configs.Config) string {
	if cfg.Cluster.Enabled && len(cfg.Agents) > 0 && cfg.Agents[0].Workspace != "" {
		return filepath.Join(cfg.Agents[0].Workspace, media.InboxDir, ".webchat-uploads")
	}
	return filepath.Join(cfg.DataDir, "webchat", "uploads")
}

// mediaLimits are the media block's download caps, which uploads obey too.
func mediaLimits(cfg *configs.Config) media.Limits {
	mb := func(n int) int64 { return int64(n) << 20 }
	m := cfg.Media.MaxMB
	return media.Limits{Image: mb(m.Image), Audio: mb(m.Audio), Video: mb(m.Video), Document: mb(m.Document)}
}

var _ web.ChatBackend = (*webBackend)(nil)

func (b *webBackend) Chats(context.Context) (map[string]web.Chat, error) {
	out := map[string]web.Chat{}
	err := b.rt.store.View(func(r persistence.Reader) error {
		return r.Scan(chatsBucket, "", func(key string, v []byte) error {
			var c web.Chat
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("webchat record %s: %w", key, err)
			}
			out[key] = c
			return nil
		})
	})
	return out, err
}

func (b *webBackend) PutChat(ctx context.Context, c web.Chat) error {
	v, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return b.rt.Write(ctx, func(tx persistence.Tx) error { return tx.Put(chatsBucket, c.ID, v) })
}

// ChatModels are what /model offers the owner first: the agent's model, its fallbacks and
// its models (the command takes any configured provider/model too).
func (b *webBackend) ChatModels(_ context.Context, agentID string) ([]string, error) {
	a, ok := b.cfg.Agent(agentID)
	if !ok {
		a, _ = b.cfg.Agent("")
	}
	var out []string
	for _, m := range append(append([]string{a.Model}, a.Fallbacks...), a.Models...) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}
