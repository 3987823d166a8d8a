package main

import (
	"fmt"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/anthropic"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/exec"
	"github.com/reefgw/reef/tools/fs"
)

// newProvider builds the client for one configured provider. This switch is the one place
// that knows every provider implementation.
func newProvider(name string, pc configs.ProviderConfig, idle time.Duration) (providers.Provider, error) {
	switch pc.Type {
	case "openai":
		return openai.New(openai.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle}), nil
	case "anthropic":
		return anthropic.New(anthropic.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle}), nil
	case "gemini":
		return gemini.New(gemini.Config{Name: name, BaseURL: pc.BaseURL, APIKey: pc.APIKey, IdleTimeout: idle}), nil
	}
	return nil, fmt.Errorf("provider %q: unknown type %q (use openai, anthropic or gemini)", name, pc.Type)
}

// newTools builds the built-in tools every agent may be offered (its policy decides).
func newTools(cfg *configs.Config) []tools.Tool {
	ex := cfg.Tools.Exec
	return append(fs.Tools(fs.Config{}), exec.New(exec.Config{
		DefaultTimeout: time.Duration(ex.TimeoutSeconds) * time.Second,
		MaxTimeout:     time.Duration(ex.MaxTimeoutSeconds) * time.Second,
		MaxOutput:      ex.MaxOutputBytes,
		Secrets:        cfg.Secrets(),
	}))
}
