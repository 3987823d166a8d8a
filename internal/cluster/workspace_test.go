package cluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// TestCheckShared: nodes on one shared folder pass; a node whose folder is its own disk (the
// other nodes' check files are not there) is refused with a message naming the node and the
// fix; once that node is forgotten, it passes.
func TestCheckShared(t *testing.T) {
	url := pgtest.URL(t)
	s, _ := newWork(t, url, 10*time.Second)
	ctx := context.Background()
	shared := t.TempDir()
	for _, node := range []string{"node-a", "node-b"} {
		if err := cluster.CheckShared(ctx, s.Pool(), node, []string{shared}); err != nil {
			t.Fatalf("%s on the shared folder: %v", node, err)
		}
	}
	if err := cluster.CheckShared(ctx, s.Pool(), "node-a", []string{shared}); err != nil {
		t.Fatalf("node-a restarts: %v", err)
	}
	// node-c mounts nothing: its "workspace" at the same path is a folder of its own disk.
	if err := os.RemoveAll(filepath.Join(shared, cluster.CheckDir)); err != nil {
		t.Fatal(err)
	}
	err := cluster.CheckShared(ctx, s.Pool(), "node-c", []string{shared})
	if !errors.Is(err, cluster.ErrNotShared) || !strings.Contains(err.Error(), `node "node-a"`) ||
		!strings.Contains(err.Error(), "NFS") {
		t.Fatalf("node-c on its own disk: %v; want ErrNotShared naming node-a and the fix", err)
	}
	for _, node := range []string{"node-a", "node-b"} {
		if _, err := cluster.Forget(ctx, s.Pool(), node); err != nil {
			t.Fatal(err)
		}
	}
	if err := cluster.CheckShared(ctx, s.Pool(), "node-c", []string{shared}); err != nil {
		t.Fatalf("node-c after the others were forgotten: %v", err)
	}
}
