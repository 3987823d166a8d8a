package main

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// A backup is the database as of one moment, gzip-compressed: bbolt writes it from a read
// transaction, so a running gateway goes on serving while it is taken. With a gateway
// running, `reef backup` asks it over the control socket (it holds the database's lock);
// without one, it opens the database read-only itself.

// backupsDir is where backups go unless told otherwise.
func backupsDir(cfg *configs.Config) string { return filepath.Join(cfg.Home, "backups") }

// backupStamp is the UTC time in backup file names; names sort as the times do.
func backupStamp(now time.Time) string { return now.UTC().Format("20060102T150405Z") }

// backupResult is what `reef backup -json` prints.
type backupResult struct {
	File      string `json:"file"`
	Bytes     int64  `json:"bytes"`               // compressed size
	Workspace string `json:"workspace,omitempty"` // the workspaces' .tar.gz, with --workspace
}

func runBackup(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("backup", stderr)
	out := flags.String("o", "", "write the backup to FILE (default $REEF_HOME/backups/reef-<UTC time>.db.gz)")
	withWorkspace := flags.Bool("workspace", false, "also write the agents' workspaces as a .tar.gz beside the backup")
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: reef backup [-o FILE] [--workspace] [-json]")
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	path := *out
	if path == "" {
		path = filepath.Join(backupsDir(cfg), "reef-"+backupStamp(time.Now())+".db.gz")
	}
	var res backupResult
	var err error
	if c := dialControl(cfg); c != nil {
		res, err = saveBackup(path, c.backup)
	} else {
		res, err = offlineBackup(cfg, path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef backup: %v\n", err)
		return 1
	}
	if *withWorkspace {
		res.Workspace = strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".db") + ".workspace.tar.gz"
		if err := writeWorkspaces(cfg, res.Workspace); err != nil {
			fmt.Fprintf(stderr, "reef backup: workspace: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		json.NewEncoder(stdout).Encode(res)
		return 0
	}
	fmt.Fprintf(stdout, "backup written to %s (%d bytes)\n", res.File, res.Bytes)
	if res.Workspace != "" {
		fmt.Fprintf(stdout, "workspace written to %s\n", res.Workspace)
	}
	return 0
}

// offlineBackup backs up the database while no gateway runs, opening it read-only.
func offlineBackup(cfg *configs.Config, path string) (backupResult, error) {
	if cfg.Storage.Postgres() {
		return backupResult{}, errors.New(postgresBackupHelp)
	}
	db := filepath.Join(cfg.DataDir, "reef.db")
	store, err := bolt.Open(db, bolt.Options{ReadOnly: true})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return backupResult{}, fmt.Errorf("there is no database at %s yet: nothing to back up", db)
	case errors.Is(err, persistence.ErrLocked):
		return backupResult{}, fmt.Errorf("the database %s is in use by a reef that does not answer on %s; try again in a moment", db, socketPath(cfg))
	case err != nil:
		return backupResult{}, damaged(err)
	}
	defer store.Close()
	return saveBackup(path, func(w io.Writer) error { return compressedCopy(store, w) })
}

// compressedCopy writes a gzip-compressed copy of store to w.
func compressedCopy(store *bolt.Store, w io.Writer) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if _, err := store.Backup(gz); err != nil {
		return err
	}
	return gz.Close()
}

// saveBackup writes the compressed bytes write produces to path (mode 0600, its directory
// 0700) through a temporary file beside it, so path is never a half-written backup.
func saveBackup(path string, write func(io.Writer) error) (backupResult, error) {
	res := backupResult{File: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return res, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return res, err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	if fi, err := os.Stat(tmp.Name()); err == nil {
		res.Bytes = fi.Size()
	}
	return res, os.Rename(tmp.Name(), path)
}

// serveBackup streams a compressed copy of the gateway's database (GET /backup on the
// control socket). A copy cut short by an error ends in a truncated gzip stream, which the
// client's check of the stream finds.
func serveBackup(st persistence.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		store, ok := st.(*bolt.Store)
		if !ok {
			http.Error(w, postgresBackupHelp, http.StatusNotImplemented)
			return
		}
		w.Header().Set("Content-Type", "application/gzip")
		if err := compressedCopy(store, w); err != nil {
			panic(http.ErrAbortHandler) // cut the stream: the client must not take it for a backup
		}
	}
}

// backup copies the running gateway's backup stream to w, checking the gzip stream as it
// goes (its length and checksum), so a cut connection is an error, not a short backup.
func (c *controlClient) backup(w io.Writer) error {
	client := &http.Client{Transport: c.http.Transport} // no timeout: a large database takes a while
	resp, err := client.Get("http://reef/backup")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("the gateway: %s", strings.TrimSpace(string(b)))
	}
	zr, err := gzip.NewReader(io.TeeReader(resp.Body, w))
	if err != nil {
		return fmt.Errorf("the gateway's copy: %w", err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("the gateway's copy was cut short: %w", err)
	}
	return nil
}
