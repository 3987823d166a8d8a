package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// restoreResult is what `reef restore -json` prints.
type restoreResult struct {
	Restored string `json:"restored"`       // the backup
	Database string `json:"database"`       // where it now is
	Kept     string `json:"kept,omitempty"` // the database it replaced, renamed
}

// runRestore puts a backup (gzip-compressed, as `reef backup` writes it, or not) in place of
// the database, after checking it; the database it replaces is kept beside it. It is refused
// while a reef uses the data directory.
func runRestore(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("restore", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	if flags.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: reef restore [-json] FILE")
		return 2
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	if c := dialControl(cfg); c != nil {
		msg := "a reef gateway is running on this data directory"
		if st, err := c.status(); err == nil {
			msg = fmt.Sprintf("a reef gateway (pid %d) is running on this data directory", st.PID)
		}
		fmt.Fprintf(stderr, "reef restore: %s: stop it first, then restore (nothing was changed)\n", msg)
		return 1
	}
	db := filepath.Join(cfg.DataDir, "reef.db")
	now := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "reef restore: %v\n", err)
		return 1
	}
	tmp, err := unpackBackup(flags.Arg(0), db+".restore-"+backupStamp(now))
	if err != nil {
		fmt.Fprintf(stderr, "reef restore: %s: %v (nothing was changed)\n", flags.Arg(0), err)
		return 1
	}
	defer os.Remove(tmp) // renamed into place on success
	kept, err := bolt.Restore(db, tmp, now)
	switch {
	case errors.Is(err, persistence.ErrLocked):
		fmt.Fprintf(stderr, "reef restore: the database %s is in use by a running reef: stop it first (nothing was changed)\n", db)
		return 1
	case errors.Is(err, persistence.ErrCorrupt):
		fmt.Fprintf(stderr, "reef restore: %s is not a usable backup: %v (nothing was changed)\n", flags.Arg(0), err)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "reef restore: %v (nothing was changed)\n", err)
		return 1
	}
	res := restoreResult{Restored: flags.Arg(0), Database: db, Kept: kept}
	if *asJSON {
		json.NewEncoder(stdout).Encode(res)
		return 0
	}
	fmt.Fprintf(stdout, "restored %s into %s\n", res.Restored, res.Database)
	if kept != "" {
		fmt.Fprintf(stdout, "the database it replaced is kept as %s: delete it once you are happy\n", kept)
	}
	return 0
}

// unpackBackup writes the database in the backup at src to dst (mode 0600), uncompressing
// it when it is gzip-compressed, and returns dst.
func unpackBackup(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	br := bufio.NewReader(in)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", err
		}
		r = zr
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, r)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return "", fmt.Errorf("cannot read the backup: %w", err)
	}
	return dst, nil
}
