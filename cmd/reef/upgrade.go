package main

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// A newer reef upgrades a database in an older store format when it opens it for writing
// (bolt.Open), after a backup of the database as it was: $REEF_HOME/backups/
// reef-before-format-<N>-<UTC time>.db.gz, which rotation never deletes. `reef restore` puts
// it back for a rollback to the previous reef (docs/operations.md).

// upgradeBackupName is the name of the backup taken before an upgrade to format to.
func upgradeBackupName(to int, now time.Time) string {
	return fmt.Sprintf("reef-before-format-%d-%s.db.gz", to, backupStamp(now))
}

// backupBeforeUpgrade is bolt's BeforeUpgrade for cfg: it writes the backup and tells say
// where it is and how to go back.
func backupBeforeUpgrade(cfg *configs.Config, say func(string)) bolt.BeforeUpgrade {
	return func(from int, backup func(io.Writer) error) error {
		path := filepath.Join(backupsDir(cfg), upgradeBackupName(persistence.Format, time.Now()))
		res, err := saveBackup(path, func(w io.Writer) error {
			gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			if err := backup(gz); err != nil {
				return err
			}
			return gz.Close()
		})
		if err != nil {
			return fmt.Errorf("backup to %s: %w", path, err)
		}
		say(fmt.Sprintf("the database is in store format %d, older than this reef's %d: upgrading it, after a backup in %s (%d bytes); "+
			"to go back to the reef you ran before, stop reef and run `reef restore %s`", from, persistence.Format, res.File, res.Bytes, res.File))
		return nil
	}
}

// sayOnStderr is the upgrade notice of commands without a logger.
func sayOnStderr(s string) { fmt.Fprintln(os.Stderr, "reef: "+s) }

// newerFormat turns Open's error for a store of a newer reef into what to do; other errors
// pass as they are.
func newerFormat(err error) error {
	if f, ok := errors.AsType[*persistence.FormatError](err); ok {
		return fmt.Errorf("%v\n%s", f, f.Help())
	}
	return err
}
