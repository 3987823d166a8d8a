package configs

import (
	"strings"
	"testing"
)

func TestValidateCluster(t *testing.T) {
	pg := StorageConfig{Driver: "postgres", URL: "postgres://reef@db/reef"}
	for _, tc := range []struct {
		storage StorageConfig
		cluster ClusterConfig
		want    string // "" = valid
	}{
		{StorageConfig{}, ClusterConfig{}, ""},
		{pg, ClusterConfig{Enabled: true}, ""},
		{pg, ClusterConfig{Enabled: true, NodeID: "node-1", Partitions: 64, LeaseSeconds: 5}, ""},
		{StorageConfig{}, ClusterConfig{Enabled: true}, "cluster.enabled: cluster mode keeps the state in PostgreSQL"},
		{StorageConfig{Driver: "bbolt"}, ClusterConfig{Enabled: true}, "set storage.driver: postgres"},
		{pg, ClusterConfig{Enabled: true, Partitions: 100000}, "cluster.partitions: 100000 is out of range"},
		{pg, ClusterConfig{Enabled: true, LeaseSeconds: 1}, "cluster.leaseSeconds: 1 is out of range"},
		{pg, ClusterConfig{Enabled: true, NodeID: "two words"}, "cluster.nodeId"},
	} {
		c := &Config{Storage: tc.storage, Cluster: tc.cluster}
		var v validator
		c.validateCluster(&v)
		var got string
		if len(v.problems) > 0 {
			got = v.problems[0].Error()
		}
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%+v %+v: got %q; want %q", tc.storage, tc.cluster, got, tc.want)
		}
	}
}

func TestClusterDefaults(t *testing.T) {
	var c ClusterConfig
	if c.PartitionCount() != 256 || c.LeaseTTL() != 10 || c.Node() == "" {
		t.Errorf("defaults: %d partitions, %d s, node %q; want 256, 10 and the host name", c.PartitionCount(), c.LeaseTTL(), c.Node())
	}
	c = ClusterConfig{NodeID: "a", Partitions: 8, LeaseSeconds: 4}
	if c.PartitionCount() != 8 || c.LeaseTTL() != 4 || c.Node() != "a" {
		t.Errorf("set: %+v read as %d, %d, %q", c, c.PartitionCount(), c.LeaseTTL(), c.Node())
	}
}
