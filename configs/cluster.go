package configs

import (
	"os"
	"strings"
)

// ClusterConfig runs several reef nodes on one PostgreSQL database (docs/scaling.md).
type ClusterConfig struct {
	Enabled      bool   `yaml:"enabled"`
	NodeID       string `yaml:"nodeId"`       // this node's name, unique in the cluster; default: the host name
	LeaseSeconds int    `yaml:"leaseSeconds"` // how long a lease lasts without renewal; default 10
}

// DefaultLeaseSeconds is cluster.leaseSeconds' default.
const DefaultLeaseSeconds = 10

// Node returns this node's name: nodeId, else the host name.
func (c ClusterConfig) Node() string {
	if id := strings.TrimSpace(c.NodeID); id != "" {
		return id
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "reef"
	}
	return host
}

// Lease returns leaseSeconds with its default.
func (c ClusterConfig) Lease() int {
	if c.LeaseSeconds <= 0 {
		return DefaultLeaseSeconds
	}
	return c.LeaseSeconds
}

func (c *Config) validateCluster(v *validator) {
	if c.Cluster.LeaseSeconds < 0 || c.Cluster.LeaseSeconds > 0 && c.Cluster.LeaseSeconds < 2 {
		v.addf("cluster.leaseSeconds: %d is too short: use at least 2 (default %d)", c.Cluster.LeaseSeconds, DefaultLeaseSeconds)
	}
	if c.Cluster.Enabled && !c.Storage.Postgres() {
		v.addf("cluster.enabled: cluster mode needs the nodes to share a database: set storage.driver: postgres (docs/scaling.md)")
	}
}
