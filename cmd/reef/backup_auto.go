package main

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// autoPrefix starts the names of the gateway's automatic backups; rotation deletes only
// these, never a backup taken with `reef backup`.
const autoPrefix = "reef-auto-"

// startBackups starts the gateway's automatic backups: every backup.every a copy of store in
// $REEF_HOME/backups, keeping the newest backup.keep. The goroutine is the gateway's (see
// runGateway): stop ends it and waits for a backup in progress, and must be called before the
// store is closed. With backups off, or on PostgreSQL (whose backups are the database's:
// pg_dump, pgBackRest), it starts nothing.
func startBackups(cfg *configs.Config, st persistence.Store, log zerolog.Logger) (stop func()) {
	every, _ := cfg.Backup.Interval() // validated
	store, isBolt := st.(*bolt.Store)
	if every == 0 || !isBolt {
		return func() {}
	}
	dir, keep := backupsDir(cfg), cfg.Backup.Keep
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			autoBackup(dir, keep, store, log)
		}
	}()
	return func() { close(quit); <-done }
}

// autoBackup writes one automatic backup, then deletes the oldest beyond keep. A failure is
// logged; the gateway goes on.
func autoBackup(dir string, keep int, store *bolt.Store, log zerolog.Logger) {
	path := filepath.Join(dir, autoPrefix+backupStamp(time.Now())+".db.gz")
	if _, err := os.Stat(path); err == nil { // two within a second: keep the first
		return
	}
	res, err := saveBackup(path, func(w io.Writer) error { return compressedCopy(store, w) })
	if err != nil {
		log.Error().Err(err).Str("file", path).Msg("automatic backup failed")
		return
	}
	log.Info().Str("file", res.File).Int64("bytes", res.Bytes).Msg("automatic backup written")
	old, err := filepath.Glob(filepath.Join(dir, autoPrefix+"*.db.gz"))
	if err != nil || len(old) <= keep {
		return
	}
	sort.Strings(old) // names sort as their times do
	for _, p := range old[:len(old)-keep] {
		if err := os.Remove(p); err != nil {
			log.Warn().Err(err).Str("file", p).Msg("old automatic backup not deleted")
		}
	}
}
