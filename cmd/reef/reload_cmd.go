package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

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
	cfg := adminConfig(*configPath, stderr)
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
