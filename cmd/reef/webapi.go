package main

import (
	"fmt"
	"net/http"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/metrics"
	"github.com/reefgw/reef/internal/openaiapi"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/persistence/postgres"
)

// The OpenAI-compatible API and /metrics, as handlers for the gateway's HTTP listener, which
// mounts them behind the gateway token (whoever holds it is the owner):
//
//	ch := addAPIChannel(&set, log)      // before startRuntime: the API is a channel
//	rt, err := startRuntime(cfg, log, set)
//	api, met := webHandlers(cfg, rt, ch)
//	mux.Handle("/v1/", api)              // GET /v1/models, POST /v1/chat/completions
//	mux.Handle("GET /metrics", met)

// addAPIChannel adds the API's channel ("openai") to the gateway's channels and returns it.
func addAPIChannel(set *channelSet, log zerolog.Logger) *openaiapi.Channel {
	ch := openaiapi.NewChannel(log)
	set.chans[openaiapi.Name] = ch
	return ch
}

// webHandlers returns the API's handler (mount at /v1/) and the metrics' (mount at /metrics).
func webHandlers(cfg *configs.Config, rt *running, ch *openaiapi.Channel, log zerolog.Logger) (api, met http.Handler) {
	agents := make([]openaiapi.Agent, 0, len(cfg.Agents))
	for _, a := range cfg.Agents {
		agents = append(agents, openaiapi.Agent{ID: a.ID, Name: a.Name})
	}
	keys := make([]openaiapi.Key, 0, len(cfg.Gateway.HTTP.APIKeys))
	for _, k := range cfg.Gateway.HTTP.APIKeys {
		keys = append(keys, openaiapi.Key{Name: k.Name, Key: k.Key, Agents: k.Agents, SessionsPrefix: k.SessionsPrefix})
	}
	api = openaiapi.New(openaiapi.Config{Channel: ch, Agents: agents, DMScope: cfg.Session.DMScope, Events: rt.events, HasTool: rt.HasTool,
		Token: cfg.Gateway.HTTP.Token, Keys: keys, Count: rt.metrics.APIRequest, Log: log})
	met = metrics.Handler(rt.metrics, metrics.Source{
		LiveSessions:   rt.LiveSessions,
		StoredSessions: rt.store.(sessionCounter).SessionCount,
		Connectors: func() []metrics.Connector {
			var cs []metrics.Connector
			for _, h := range rt.Health() {
				cs = append(cs, metrics.Connector{Name: h.Name, Up: h.Connected, Restarts: h.Restarts})
			}
			return cs
		},
		Storage: func() bool { return rt.StorageHealth().Up },
		Log:     log,
	})
	return api, met
}

// storedRows counts the store's inbox and outbox rows for metrics.Prime.
func storedRows(store persistence.Store) metrics.RowCounter {
	return func(began func()) (int, int, error) {
		switch s := store.(type) {
		case *bolt.Store:
			c, err := s.Counts(began)
			return c.Inbox, c.Outbox, err
		case *postgres.Store:
			c, err := s.Counts(began)
			return c.Inbox, c.Outbox, err
		}
		return 0, 0, fmt.Errorf("counting rows: a %T cannot count them", store)
	}
}

// sessionCounter counts the stored sessions for /metrics; both stores can.
type sessionCounter interface{ SessionCount() (int, error) }
