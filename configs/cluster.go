package configs

import (
	"os"
	"strings"
)

// Cluster defaults (docs/scaling.md).
const (
	DefaultClusterPartitions   = 256
	DefaultClusterLeaseSeconds = 10
)

// ClusterConfig turns on cluster mode: several reef nodes on one PostgreSQL database, each
// conversation run by the one node that holds its partition's lease (docs/scaling.md).
type ClusterConfig struct {
	Enabled bool `yaml:"enabled"`
	// NodeID names this node among the cluster's; default the host name. Two running nodes
	// must never share one.
	NodeID string `yaml:"nodeId"`
	// Partitions is how many partitions session keys hash into (default 256). Every node of
	// a cluster must use the same number.
	Partitions int `yaml:"partitions"`
	// LeaseSeconds is how long a partition's lease and a node's heartbeat last (default 10):
	// a dead node's conversations move to the others after about this long.
	LeaseSeconds int `yaml:"leaseSeconds"`
}

// Node returns the node's id: nodeId, or the host name.
func (c ClusterConfig) Node() string {
	if id := strings.TrimSpace(c.NodeID); id != "" {
		return id
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "reef"
	}
	return h
}

// PartitionCount returns partitions, or its default.
func (c ClusterConfig) PartitionCount() int {
	if c.Partitions > 0 {
		return c.Partitions
	}
	return DefaultClusterPartitions
}

// LeaseTTL returns leaseSeconds, or its default, in seconds.
func (c ClusterConfig) LeaseTTL() int {
	if c.LeaseSeconds > 0 {
		return c.LeaseSeconds
	}
	return DefaultClusterLeaseSeconds
}

func (c *Config) validateCluster(v *validator) {
	cl := c.Cluster
	if !cl.Enabled {
		return
	}
	if !c.Storage.Postgres() {
		v.addf("cluster.enabled: cluster mode keeps the state in PostgreSQL, which every node shares; " +
			"set storage.driver: postgres and storage.url (bbolt is one file that one process holds; see docs/scaling.md)")
	}
	if cl.Partitions < 0 || cl.Partitions > 65536 {
		v.addf("cluster.partitions: %d is out of range (1 to 65536; default %d)", cl.Partitions, DefaultClusterPartitions)
	}
	if cl.LeaseSeconds != 0 && (cl.LeaseSeconds < 3 || cl.LeaseSeconds > 600) {
		v.addf("cluster.leaseSeconds: %d is out of range (3 to 600; default %d)", cl.LeaseSeconds, DefaultClusterLeaseSeconds)
	}
	if strings.ContainsAny(cl.NodeID, " \t\r\n") || len(cl.NodeID) > 128 {
		v.addf("cluster.nodeId: %q must be one word of at most 128 characters (default: the host name)", cl.NodeID)
	}
}
