package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/termtext"
)

// runReload asks the running gateway to re-read its configuration and prints the outcome.
// Exit status 1 when it was refused (the gateway keeps its old configuration) or no gateway
// runs.
func runReload(args []string, stdout, stderr io.Writer) int {
	flags, configPath := commandFlags("reload", stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return code
	}
	cfg := runningConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	c := dialControl(cfg)
	if c == nil {
		fmt.Fprintln(stderr, "reef reload: no running gateway (the configuration is read when `reef gateway` starts)")
		return 1
	}
	st, err := c.reload()
	if err != nil {
		fmt.Fprintf(stderr, "reef reload: %v\n", err)
		return 1
	}
	if *asJSON {
		printJSON(stdout, st)
	} else {
		printReload(stdout, &st)
	}
	if st.Refused != "" {
		return 1
	}
	return 0
}

func (c *controlClient) reload() (ReloadStatus, error) {
	var st ReloadStatus
	resp, err := c.http.Post("http://reef/reload", "", nil)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return st, errors.New(strings.TrimSpace(string(b)))
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// printReload shows a reload's outcome: what it applied, or why it was refused, and the
// settings that wait for a restart. Nothing for nil (no reload since the start).
func printReload(w io.Writer, st *ReloadStatus) {
	if st == nil {
		return
	}
	at := st.At.Local().Format(time.DateTime)
	switch {
	case st.Refused != "":
		fmt.Fprintf(w, "config reload REFUSED (%s, %s): the gateway keeps running its previous configuration\n", at, st.Source)
		for _, line := range strings.Split(st.Refused, "\n") {
			fmt.Fprintf(w, "  %s\n", termtext.Line(line))
		}
	case len(st.Applied) == 0:
		fmt.Fprintf(w, "config reloaded (%s, %s): nothing to apply\n", at, st.Source)
	default:
		fmt.Fprintf(w, "config reloaded (%s, %s): %s\n", at, st.Source, strings.Join(st.Applied, ", "))
	}
	if len(st.Restart) > 0 {
		fmt.Fprintf(w, "config: %s changed; takes effect after a restart (`reef service` restarts, or stop and start `reef gateway`)\n",
			strings.Join(st.Restart, ", "))
	}
}

// runningConfig is adminConfig for the commands that talk to a running gateway (status,
// reload): an edit the gateway refused (reef.yaml has problems) or has not applied yet (a new
// dataDir waits for a restart) must not hide the gateway that runs. The data directory the
// file names, else the default one, leads to its control socket; the file's problems are
// said on stderr.
func runningConfig(path string, stderr io.Writer) *configs.Config {
	cfg, err := loadConfig(path)
	usable := err == nil || cfg != nil && len(readOnlyProblems(err)) == 0
	defaults, _ := configs.LoadBytes(configs.DefaultPath(os.Getenv), nil, os.Getenv)
	for _, c := range []*configs.Config{cfg, defaults} {
		if c != nil && dialControl(c) != nil {
			if !usable {
				fmt.Fprintf(stderr, "reef: %s has problems (a running gateway refuses it and keeps its previous configuration):\n%v\n",
					configFile(path), err)
			}
			return c
		}
	}
	if usable {
		return cfg
	}
	return adminConfig(path, stderr)
}
