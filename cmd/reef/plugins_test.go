package main

import (
	"slices"
	"testing"

	"github.com/reefgw/reef/configs"
)

// builtinNames names the built-in tools a config offers.
func builtinNames(cfg *configs.Config) []string {
	return toolNames(newTools(cfg, nil, nil))
}

func TestWebToolsOffered(t *testing.T) {
	cfg := &configs.Config{}
	names := builtinNames(cfg)
	if !slices.Contains(names, "web_fetch") || slices.Contains(names, "web_search") {
		t.Errorf("without a search provider: %v, want web_fetch and no web_search", names)
	}
	cfg.Tools.Web.Search = configs.WebSearchConfig{Provider: "brave", APIKey: "k"}
	if names := builtinNames(cfg); !slices.Contains(names, "web_search") {
		t.Errorf("with brave: %v, want web_search", names)
	}
}
