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
	st, err := postgres.Open(ctx, cfg.Storage.URL, postgres.Options{Exclusive: exclusive})
	if errors.Is(err, persistence.ErrLocked) {
		return nil, errors.New("another reef is already running on the PostgreSQL database of storage.url " +
			"(stop it first: several nodes on one database need cluster mode, which is not built yet; see docs/scaling.md)")
	}
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL database of storage.url: %w", err)
	}
	return st, nil
}
