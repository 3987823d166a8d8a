package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/configs"
)

// runInit creates $REEF_HOME with the data directory, each agent's starter workspace (the
// agents of reef.yaml if there is one) and a commented example configuration. It never
// overwrites a file.
func runInit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprint(stdout, commandUsage("init"))
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: reef init")
		return 2
	}
	// Agents and directories come from $REEF_HOME/reef.yaml when it exists. Its other
	// problems (no provider yet, most likely) are for `reef doctor`, not for init.
	cfg, err := configs.LoadDefault(os.Getenv)
	if cfg == nil {
		fmt.Fprintf(stderr, "reef init: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "reef init: %v\n", err)
		return 1
	}
	example := filepath.Join(cfg.Home, "reef.example.yaml")
	if _, err := os.Stat(example); os.IsNotExist(err) {
		if err := os.WriteFile(example, configs.Example, 0o600); err != nil {
			fmt.Fprintf(stderr, "reef init: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "created %s (copy it to reef.yaml to configure reef)\n", example)
	}
	for _, a := range cfg.Agents {
		created, err := agent.InitWorkspace(a.Workspace)
		if err != nil {
			fmt.Fprintf(stderr, "reef init: workspace %s: %v\n", a.Workspace, err)
			return 1
		}
		for _, f := range created {
			fmt.Fprintf(stdout, "created %s\n", filepath.Join(a.Workspace, f))
		}
		if len(created) == 0 {
			fmt.Fprintf(stdout, "workspace %s is already set up\n", a.Workspace)
		}
	}
	fmt.Fprintf(stdout, "\nreef home: %s\nNext: set a model (e.g. OPENAI_API_KEY=... REEF_MODEL=openai/gpt-4.1-mini) and run `reef chat`.\n", cfg.Home)
	return 0
}
