package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/persistence/postgres"
)

// migrateResult is what `reef migrate -json` prints.
type migrateResult struct {
	From   string                         `json:"from"`   // the bbolt file copied (left in place)
	Backup string                         `json:"backup"` // the backup taken first
	Copied map[persistence.RecordKind]int `json:"copied"` // records copied, by kind; the database holds as many rows
}

// runMigrate copies the bbolt database of the data directory into PostgreSQL: `reef migrate
// --to postgres [-url URL]`. It takes a backup first, copies everything in one transaction
// (into a database with no reef data yet), and verifies the copy by counting each table's rows
// against the records read. The bbolt file is left as it was.
func runMigrate(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("migrate", stderr)
	to := flags.String("to", "", "where to copy the database: postgres")
	url := flags.String("url", "", "the PostgreSQL database (default: storage.url, else $REEF_DATABASE_URL)")
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	if *to != "postgres" || flags.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: reef migrate --to postgres [-url URL] [-json]")
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	target := *url
	if target == "" {
		target = cfg.Storage.URL
	}
	if target == "" {
		target = os.Getenv("REEF_DATABASE_URL")
	}
	if target == "" {
		fmt.Fprintln(stderr, "reef migrate: no database: give -url, set storage.url, or set REEF_DATABASE_URL")
		return 2
	}
	if c := dialControl(cfg); c != nil {
		fmt.Fprintln(stderr, "reef migrate: a reef gateway is running on this data directory: stop it first (nothing was changed)")
		return 1
	}
	res, err := migrateToPostgres(filepath.Join(cfg.DataDir, "reef.db"), backupsDir(cfg), target)
	if err != nil {
		fmt.Fprintf(stderr, "reef migrate: %v\n", err)
		return 1
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(res)
		return 0
	}
	fmt.Fprintf(stdout, "backup written to %s\n", res.Backup)
	fmt.Fprintf(stdout, "copied %s into PostgreSQL: %d sessions, %d transcript entries, %d snapshots, %d inbox and %d outbox rows, "+
		"%d dedup ids, %d other records; every table's count matches\n", res.From,
		res.Copied[persistence.RecordSession], res.Copied[persistence.RecordMessage], res.Copied[persistence.RecordSnapshot],
		res.Copied[persistence.RecordInbox], res.Copied[persistence.RecordOutbox], res.Copied[persistence.RecordDedup],
		res.Copied[persistence.RecordKV])
	fmt.Fprintln(stdout, "next: set `storage: {driver: postgres, url: ${REEF_DATABASE_URL}}` in reef.yaml and start reef; "+
		"the bbolt file is left as it was")
	return 0
}

// migrateToPostgres backs up the bbolt database at db into backups, copies it into the
// PostgreSQL database at url and checks the counts.
func migrateToPostgres(db, backups, url string) (migrateResult, error) {
	res := migrateResult{From: db, Copied: map[persistence.RecordKind]int{}}
	src, err := bolt.Open(db, bolt.Options{ReadOnly: true}) // a gateway cannot start while it is open
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("there is no database at %s: nothing to migrate", db)
	case errors.Is(err, persistence.ErrLocked):
		return res, fmt.Errorf("the database %s is in use by a running reef: stop it first (nothing was changed)", db)
	case err != nil:
		return res, damaged(err)
	}
	defer src.Close()
	res.Backup = filepath.Join(backups, "before-migrate-"+backupStamp(time.Now())+".db.gz")
	if _, err := saveBackup(res.Backup, func(w io.Writer) error { return compressedCopy(src, w) }); err != nil {
		return res, fmt.Errorf("backup before migrating: %w (nothing was changed)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	dst, err := postgres.Open(ctx, url, postgres.Options{Exclusive: true})
	if errors.Is(err, persistence.ErrLocked) {
		return res, errors.New("a reef gateway is running on the PostgreSQL database: stop it first (nothing was changed)")
	}
	if err != nil {
		return res, err
	}
	defer dst.Close()
	err = dst.Import(ctx, func(fn func(persistence.Record) error) error {
		return src.Export(func(r persistence.Record) error {
			res.Copied[r.Kind]++
			return fn(r)
		})
	})
	if errors.Is(err, postgres.ErrNotEmpty) {
		return res, errors.New("the PostgreSQL database already holds reef data: migrate into an empty one (nothing was changed)")
	}
	if err != nil {
		return res, err
	}
	counts, err := dst.TableCounts()
	if err != nil {
		return res, fmt.Errorf("counting the copy: %w", err)
	}
	var wrong []error
	for kind, table := range postgres.TableOf {
		if got, want := counts[table], int64(res.Copied[kind]); got != want {
			wrong = append(wrong, fmt.Errorf("%s holds %d rows, %d %s records were copied", table, got, want, kind))
		}
	}
	if len(wrong) > 0 {
		return res, fmt.Errorf("the copy does not match (the bbolt file is unchanged, the backup is %s): %w", res.Backup, errors.Join(wrong...))
	}
	return res, nil
}
