package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CheckDir is the folder of a workspace where each node leaves its check file.
const CheckDir = ".reef-cluster"

// workspaceSchema records which node wrote which check file with which token.
const workspaceSchema = `
CREATE TABLE IF NOT EXISTS reef_workspace_checks (
	node    text NOT NULL,
	dir     text NOT NULL,
	token   text NOT NULL,
	written timestamptz NOT NULL,
	PRIMARY KEY (node, dir)
);
`

// ErrNotShared is CheckShared's error when a workspace is plainly not the same on every node.
var ErrNotShared = errors.New("cluster: the workspace is not shared between the nodes")

// CheckShared proves, at a node's start, that each workspace dir is the same folder on every
// node (docs/scaling.md: NFS, EFS, CephFS): it writes a check file with a fresh token into
// dir/.reef-cluster/<node> and records the token in the database; then every check file
// another node recorded for dir must be there, with its token. A folder of this machine's
// own disk fails as soon as a second node starts: the other node's file is missing here.
func CheckShared(ctx context.Context, pool *pgxpool.Pool, node string, dirs []string) error {
	if _, err := pool.Exec(ctx, workspaceSchema); err != nil {
		return fmt.Errorf("cluster: create workspace check table: %w", err)
	}
	var problems []error
	for _, dir := range dirs {
		if err := checkDir(ctx, pool, node, dir); err != nil {
			problems = append(problems, err)
		}
	}
	return errors.Join(problems...)
}

func checkDir(ctx context.Context, pool *pgxpool.Pool, node, dir string) error {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	folder := filepath.Join(dir, CheckDir)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return fmt.Errorf("cluster: workspace %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(folder, fileName(node)), []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("cluster: workspace %s: write the check file: %w", dir, err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO reef_workspace_checks (node, dir, token, written) VALUES ($1, $2, $3, now())
		ON CONFLICT (node, dir) DO UPDATE SET token = EXCLUDED.token, written = EXCLUDED.written`, node, dir, token); err != nil {
		return fmt.Errorf("cluster: workspace %s: record the check: %w", dir, err)
	}
	rows, err := pool.Query(ctx, `SELECT node, token, to_char(written, 'YYYY-MM-DD HH24:MI:SS TZ') FROM reef_workspace_checks
		WHERE dir = $1 AND node <> $2 ORDER BY node`, dir, node)
	if err != nil {
		return fmt.Errorf("cluster: workspace %s: read the checks: %w", dir, err)
	}
	type check struct{ node, token, written string }
	others, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (check, error) {
		var c check
		err := r.Scan(&c.node, &c.token, &c.written)
		return c, err
	})
	if err != nil {
		return fmt.Errorf("cluster: workspace %s: read the checks: %w", dir, err)
	}
	for _, c := range others {
		raw, err := os.ReadFile(filepath.Join(folder, fileName(c.node)))
		if err == nil && strings.TrimSpace(string(raw)) == c.token {
			continue
		}
		return fmt.Errorf("%w: node %q wrote %s at %s, and this node does not see it in %s. "+
			"Every node must mount the same workspace (a shared volume such as NFS, EFS or CephFS; docs/scaling.md). "+
			"If node %q is gone for good, forget it: reef cluster forget %s",
			ErrNotShared, c.node, filepath.Join(CheckDir, fileName(c.node)), c.written, dir, c.node, c.node)
	}
	return nil
}

// Forget removes a node's workspace checks (a node gone for good).
func Forget(ctx context.Context, pool *pgxpool.Pool, node string) (int64, error) {
	tag, err := pool.Exec(ctx, `DELETE FROM reef_workspace_checks WHERE node = $1`, node)
	if err != nil {
		if isUndefinedTable(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("cluster: forget %s: %w", node, err)
	}
	return tag.RowsAffected(), nil
}

// fileName keeps a node name a single file name.
func fileName(node string) string {
	return strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(node)
}
