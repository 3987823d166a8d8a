package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence/bolt"
)

// runInit creates $REEF_HOME with the data directory, each agent's starter workspace (the
// agents of reef.yaml if there is one) and a commented example configuration. It never
// overwrites a file.
//
// With --fresh it also starts an empty database in place of an empty (zero-length) reef.db,
// which reef otherwise refuses to start on, keeping the old file beside it.
func runInit(args []string, stdout, stderr io.Writer) int {
	flags := newFlags("init", stderr)
	fresh := flags.Bool("fresh", false, "move an empty (0-byte) reef.db aside and create a new database")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: reef init [--fresh]")
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
	if *fresh {
		if err := freshDatabase(filepath.Join(cfg.DataDir, "reef.db"), stdout); err != nil {
			fmt.Fprintf(stderr, "reef init: %v\n", err)
			return 1
		}
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

// freshDatabase creates a new database at path, first renaming an empty file there to
// path.empty-<time>. A file that holds data is left alone: that is for `reef restore` or
// `reef doctor --repair`.
func freshDatabase(path string, stdout io.Writer) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Size() > 0:
		return fmt.Errorf("%s holds data (%d bytes): --fresh only replaces an empty file; "+
			"to replace it, stop reef and move it aside yourself, or use `reef restore FILE`", path, fi.Size())
	case err == nil:
		kept := path + ".empty-" + time.Now().UTC().Format("20060102-150405")
		if err := os.Rename(path, kept); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "moved the empty %s aside to %s\n", path, kept)
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created a new, empty database %s\n", path)
	return nil
}
