package configs

import (
	"strings"
	"testing"
)

func TestValidateCluster(t *testing.T) {
	pg := StorageConfig{Driver: "postgres", URL: "postgres://reef@db/reef"}
	for _, tc := range []struct {
		cluster ClusterConfig
		storage StorageConfig
		want    string
	}{
		{ClusterConfig{}, StorageConfig{}, ""},
		{ClusterConfig{Enabled: true, LeaseSeconds: 10}, pg, ""},
		{ClusterConfig{Enabled: true}, StorageConfig{}, "cluster.enabled: cluster mode needs the nodes to share a database"},
		{ClusterConfig{Enabled: true, LeaseSeconds: 1}, pg, "cluster.leaseSeconds: 1 is too short"},
	} {
		c := &Config{Cluster: tc.cluster, Storage: tc.storage}
		var v validator
		c.validateCluster(&v)
		got := ""
		if len(v.problems) > 0 {
			got = v.problems[0].Error()
		}
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %q, want %q", tc.cluster, got, tc.want)
		}
	}
	if got := (ClusterConfig{NodeID: " b "}).Node(); got != "b" {
		t.Errorf("Node = %q; want b", got)
	}
	if got := (ClusterConfig{}).Lease(); got != DefaultLeaseSeconds {
		t.Errorf("Lease = %d; want the default", got)
	}
}
