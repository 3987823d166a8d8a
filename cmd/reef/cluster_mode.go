package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// clusterMode is a gateway's membership in a cluster (cluster.enabled, docs/scaling.md): the
// Node loop that holds its partitions and the listener that hears inbox entries committed on
// any node. start begins both once the actor tree runs; stop ends them after the tree has
// stopped writing, and hands the partitions over (Leave).
type clusterMode struct {
	node   *cluster.Node
	store  *postgres.Store
	relay  *relayGlue // replies and live runs of WebChat, the API, the terminal to other nodes (cluster_relay.go)
	log    zerolog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newClusterMode prepares cluster mode on store (nil, nil when it is off).
func newClusterMode(cfg *configs.Config, store persistence.Store, log zerolog.Logger) (*clusterMode, error) {
	if !cfg.Cluster.Enabled {
		return nil, nil
	}
	pg, ok := store.(*postgres.Store)
	if !ok {
		return nil, errors.New("cluster mode needs storage.driver: postgres")
	}
	ctx, cancel := context.WithTimeout(context.Background(), postgresConnectTimeout)
	defer cancel()
	leases, err := cluster.New(ctx, pg.Pool(), time.Duration(cfg.Cluster.LeaseTTL())*time.Second)
	if err != nil {
		return nil, err
	}
	if err := leases.CheckPartitions(ctx, cfg.Cluster.Node(), cfg.Cluster.PartitionCount()); err != nil {
		return nil, err
	}
	m := &clusterMode{store: pg, log: log.With().Str("cluster", cfg.Cluster.Node()).Logger()}
	m.node = cluster.NewNode(leases, cfg.Cluster.Node(), cfg.Cluster.PartitionCount(), nil, log)
	if m.relay, err = newRelayGlue(ctx, m, cfg.Cluster.Node()); err != nil {
		return nil, err
	}
	return m, nil
}

// ownership is what the actor tree sees of the node (nil when cluster mode is off).
func (m *clusterMode) ownership() actors.Ownership {
	if m == nil {
		return nil
	}
	return m.node
}

// relayChannels returns chans with the channels whose connections one node holds (WebChat,
// the API, the terminal) wrapped, so that what their sessions show reaches the other nodes,
// and follows their run events on bus (cluster_relay.go). Call it before the runtime starts.
func (m *clusterMode) relayChannels(chans map[string]channels.Channel, bus *events.Bus) map[string]channels.Channel {
	if m == nil {
		return chans
	}
	return m.relay.wrap(chans, bus)
}

// start runs the Node loop, the listener and the relay, telling rt what they learn.
func (m *clusterMode) start(rt *actors.Runtime) {
	if m == nil {
		return
	}
	m.node.OnChange(func(gained, lost []int) { rt.PartitionsChanged() })
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.wg.Add(3)
	go func() {
		defer m.wg.Done()
		m.node.Run(ctx)
	}()
	go func() {
		defer m.wg.Done()
		m.relay.run(ctx)
	}()
	go func() {
		defer m.wg.Done()
		_ = m.store.Listen(ctx, rt.InboxNotified) // "" at each (re)connect: the Router sweeps
	}()
	// Connections are taken (the web listener, reef chat's first line) once this node hears
	// what the others relay: a reply relayed before would not be shown.
	select {
	case <-m.relay.relay.Listening():
	case <-time.After(postgresConnectTimeout):
		m.log.Warn().Msg("cluster: the relay does not listen yet; replies of runs on other nodes are shown once it does")
	}
	m.log.Info().Int("partitions", m.node.Partitions()).Msg("cluster: joined")
}

// stop ends the loop and the listener and hands this node's partitions over. Call it after
// the actor tree stopped and before the store closes.
func (m *clusterMode) stop() {
	if m == nil || m.cancel == nil {
		return
	}
	m.cancel()
	m.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.node.Leave(ctx); err != nil {
		m.log.Warn().Err(err).Msg("cluster: leaving (the partitions move when their leases expire)")
		return
	}
	m.log.Info().Msg("cluster: left; partitions handed over")
}
