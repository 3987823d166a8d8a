package main

import (
	"slices"
	"testing"

	"github.com/reefgw/reef/configs"
)

func toolNames(cfg *configs.Config) []string {
	var names []string
	for _, t := range newTools(cfg, nil) {
		names = append(names, t.Spec().Name)
	}
	return names
}

func TestWebToolsOffered(t *testing.T) {
	cfg := &configs.Config{}
	names := toolNames(cfg)
	if !slices.Contains(names, "web_fetch") || slices.Contains(names, "web_search") {
		t.Errorf("without a search provider: %v, want web_fetch and no web_search", names)
	}
	cfg.Tools.Web.Search = configs.WebSearchConfig{Provider: "brave", APIKey: "k"}
	if names := toolNames(cfg); !slices.Contains(names, "web_search") {
		t.Errorf("with brave: %v, want web_search", names)
	}
}
