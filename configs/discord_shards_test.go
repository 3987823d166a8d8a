package configs

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// TestShardsYAMLInt: `shards: 4` (a YAML number) is read like `shards: "4"`.
func TestShardsYAMLInt(t *testing.T) {
	var d DiscordConfig
	if err := yaml.Unmarshal([]byte("shards: 4\n"), &d); err != nil {
		t.Fatal(err)
	}
	if n, err := d.ShardCount(); n != 4 || err != nil {
		t.Fatal(n, err)
	}
}
