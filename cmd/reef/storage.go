package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// postgresBackupHelp is what `reef backup` says on PostgreSQL.
const postgresBackupHelp = "this reef keeps its state in PostgreSQL (storage.driver: postgres): back it up with the database's tools " +
	"(pg_dump, pgBackRest, your provider's snapshots), see docs/scaling.md"

// postgresConnectTimeout bounds connecting to PostgreSQL and creating reef's tables at start.
const postgresConnectTimeout = 30 * time.Second

// openPostgres opens the PostgreSQL store of storage.url (storage.driver: postgres).
// exclusive makes this process the database's only reef, as bolt's file lock does (until
// partition leases let several nodes share one). Errors never hold the URL: it may carry a
// password.
func openPostgres(cfg *configs.Config, exclusive bool) (*postgres.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), postgresConnectTimeout)
	defer cancel()
	st, err := postgres.Open(ctx, cfg.Storage.URL, postgres.Options{Exclusive: exclusive, Notify: cfg.Cluster.Enabled, IdleInTransaction: idleInTransaction(cfg)})
	if errors.Is(err, persistence.ErrLocked) {
		return nil, errors.New("another reef is already running on the PostgreSQL database of storage.url " +
			"(stop it first: several nodes on one database need cluster mode, which is not built yet; see docs/scaling.md)")
	}
	if err != nil {
		return nil, newerFormat(fmt.Errorf("the PostgreSQL database of storage.url: %w", err))
	}
	return st, nil
}

// idleInTransaction is how long a cluster node's session may stay idle inside a transaction:
// half a lease, so a node frozen in one releases its lease rows' locks before the others
// take its partitions over (0, the server's setting, without cluster mode).
func idleInTransaction(cfg *configs.Config) time.Duration {
	if !cfg.Cluster.Enabled {
		return 0
	}
	return time.Duration(cfg.Cluster.LeaseTTL()) * time.Second / 2
}

// checkPostgres is `reef doctor`'s check of the PostgreSQL database: reachable, version 15
// or newer, reef's schema, and the clock skew between it and this machine.
func (d *doctor) checkPostgres(cfg *configs.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), postgresConnectTimeout)
	defer cancel()
	h, err := postgres.Check(ctx, cfg.Storage.URL)
	if err != nil {
		d.fail("database", "PostgreSQL (storage.url) cannot be reached: "+err.Error(),
			"check storage.url (or REEF_DATABASE_URL), that the server runs and accepts this machine (pg_hba.conf)")
		return
	}
	if problems := h.Problems(); len(problems) > 0 {
		for _, p := range problems {
			d.fail("database", p, "see docs/scaling.md")
		}
		return
	}
	schema := fmt.Sprintf("store format %d", h.Schema)
	if h.Schema == 0 {
		schema = "no reef tables yet (reef creates them at start)"
	}
	d.ok("database", fmt.Sprintf("PostgreSQL %d.%d, %s, clock %v off", h.VersionNum/10000, h.VersionNum%10000, schema, h.ClockSkew))
}
