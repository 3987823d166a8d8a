package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// TestClusterStartAndStatus: a node starts in cluster mode on a shared workspace and holds
// the timer; a second node whose workspace is not the first's is refused with the fix;
// `reef cluster status` (no gateway: from the database) shows who holds the timer.
func TestClusterStartAndStatus(t *testing.T) {
	url := pgtest.URL(t)
	shared, other := t.TempDir(), t.TempDir()
	node := func(name, ws string) *configs.Config {
		return &configs.Config{Agents: []configs.AgentConfig{{ID: "main", Workspace: ws}},
			Storage: configs.StorageConfig{Driver: configs.StoragePostgres, URL: url},
			Cluster: configs.ClusterConfig{Enabled: true, NodeID: name, LeaseSeconds: 5}}
	}
	open := func() *postgres.Store {
		st, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	gate, err := startCluster(node("node-a", shared), open(), nil, zerolog.Nop())
	if err != nil || gate == nil {
		t.Fatalf("node-a starts: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, release, err := gate.Hold(ctx, "timer")
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	// node-b has its own disk at the same path: node-a's check file is not there.
	if err := os.Rename(filepath.Join(shared, cluster.CheckDir), filepath.Join(other, cluster.CheckDir)); err != nil {
		t.Fatal(err)
	}
	_, err = startCluster(node("node-b", shared), open(), nil, zerolog.Nop())
	if !errors.Is(err, cluster.ErrNotShared) || !strings.Contains(err.Error(), "reef cluster forget node-a") {
		t.Fatalf("node-b on a workspace it does not share: %v; want ErrNotShared with the fix", err)
	}

	home := t.TempDir()
	cfgPath := filepath.Join(home, "reef.yaml")
	yaml := "providers:\n  openai: {baseUrl: http://127.0.0.1:9/v1, apiKey: x}\nagents:\n  - id: main\n    model: openai/m\n    workspace: " + shared + "\n" +
		postgresYAML(url) + "dataDir: " + filepath.Join(home, "data") + "\ncluster:\n  enabled: true\n  nodeId: node-c\n"
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := runCluster([]string{"status", "-config", cfgPath}, &out, &errs); code != 0 {
		t.Fatalf("reef cluster status: exit %d: %s", code, errs.String())
	}
	text := out.String()
	for _, want := range []string{"read from the database", "node-a", "timer", "WORKSPACE CHECK"} {
		if !strings.Contains(text, want) {
			t.Errorf("reef cluster status lacks %q:\n%s", want, text)
		}
	}
	var timerLine string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "timer ") {
			timerLine = l
		}
	}
	if !strings.Contains(timerLine, "node-a") {
		t.Errorf("timer line %q; want it held by node-a", timerLine)
	}
}
