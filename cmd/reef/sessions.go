package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

const sessionsUsage = `usage:
  reef sessions list   [-agent ID] [-channel NAME] [-limit N] [-json]
  reef sessions show   <key> [-n 20] [-json]
  reef sessions export <key> [-format jsonl|md] [-o FILE]
A key may be shortened to its unique start or end (telegram:direct:42). Every command also
takes -config FILE. Through the running gateway when one runs, else from the database.`

// sessionSource is where `reef sessions` reads: the database, or a running gateway.
type sessionSource interface {
	list(f sessionFilter) (sessionList, error)
	show(key string, n int) (sessionDetail, error)
	export(key string) (transcript, error)
}

// runSessions lists stored conversations, shows one, or exports its whole transcript.
func runSessions(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, sessionsUsage)
		return 2
	}
	if isHelp(args[0]) {
		fmt.Fprintln(stdout, sessionsUsage)
		return 0
	}
	verb := args[0]
	flags, configPath := commandFlags("sessions "+verb, stderr)
	var run func(src sessionSource, pos []string) error
	switch verb {
	case "list":
		agent, channel := flags.String("agent", "", "only this agent's sessions"), flags.String("channel", "", "only sessions on this channel")
		limit, asJSON := flags.Int("limit", 50, "show the newest N (0: all)"), flags.Bool("json", false, "print JSON")
		run = func(src sessionSource, pos []string) error {
			if len(pos) != 0 || *limit < 0 {
				return errUsage
			}
			list, err := src.list(sessionFilter{Agent: *agent, Channel: *channel, Limit: *limit})
			switch {
			case err != nil:
				return err
			case *asJSON:
				return printJSON(stdout, list.Sessions)
			}
			printSessionList(stdout, list)
			return nil
		}
	case "show":
		n, asJSON := flags.Int("n", 20, "show the last N transcript entries"), flags.Bool("json", false, "print JSON")
		run = func(src sessionSource, pos []string) error {
			if len(pos) != 1 || *n < 0 {
				return errUsage
			}
			d, err := src.show(pos[0], *n)
			switch {
			case err != nil:
				return err
			case *asJSON:
				return printJSON(stdout, d)
			}
			printSessionDetail(stdout, d)
			return nil
		}
	case "export":
		format, out := flags.String("format", "jsonl", "jsonl or md"), flags.String("o", "", "write to FILE (mode 0600) instead of stdout")
		run = func(src sessionSource, pos []string) error {
			if len(pos) != 1 || *format != "jsonl" && *format != "md" {
				return errUsage
			}
			tr, err := src.export(pos[0])
			if err != nil {
				return err
			}
			return writeExport(stdout, *out, *format, tr)
		}
	default:
		fmt.Fprintf(stderr, "reef sessions: unknown command %q\n%s\n", verb, sessionsUsage)
		return 2
	}
	pos, err := parseInterspersed(flags, args[1:])
	if err != nil {
		return flagExit(err, flags, stdout)
	}
	cfg := adminConfig(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	src, done, err := openSessions(cfg)
	if err == nil {
		err = run(src, pos)
		done()
	}
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, sessionsUsage)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "reef sessions %s: %v\n", verb, err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

// cmpErr returns the first non-nil error.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseInterspersed parses flags placed before, between and after the positional arguments
// (`reef sessions show KEY -n 5`) and returns the positional ones.
func parseInterspersed(flags *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := flags.Parse(args); err != nil {
			return nil, err
		}
		if flags.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, flags.Arg(0))
		args = flags.Args()[1:]
	}
}

// openSessions returns the running gateway's sessions, else the database's, opened read-only
// (so it creates nothing and may run beside other readers). done releases what it opened.
func openSessions(cfg *configs.Config) (src sessionSource, done func(), err error) {
	if c := dialControl(cfg); c != nil {
		return controlSessions{c}, func() {}, nil
	}
	if cfg.Storage.Postgres() { // the database is shared: no read-only mode needed
		store, err := openPostgres(cfg, false)
		if err != nil {
			return nil, nil, err
		}
		return storeSessions{store: store, live: notRunning}, func() { store.Close() }, nil
	}
	path := filepath.Join(cfg.DataDir, "reef.db")
	store, err := bolt.Open(path, bolt.Options{ReadOnly: true})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return noDatabase{path}, func() {}, nil
	case errors.Is(err, persistence.ErrLocked):
		return nil, nil, fmt.Errorf("the database %s is in use by a reef that does not answer on %s; try again in a moment", path, socketPath(cfg))
	case err != nil:
		return nil, nil, damaged(err)
	}
	return storeSessions{store: store, live: notRunning}, func() { store.Close() }, nil
}

// noDatabase is the source when reef never ran with this data directory.
type noDatabase struct{ path string }

func (noDatabase) list(sessionFilter) (sessionList, error) {
	return sessionList{Sessions: []sessionRow{}}, nil
}

func (d noDatabase) show(key string, _ int) (sessionDetail, error) {
	return sessionDetail{}, d.missing(key)
}

func (d noDatabase) export(key string) (transcript, error) { return transcript{}, d.missing(key) }

func (d noDatabase) missing(key string) error {
	return &keyError{fmt.Sprintf("no session %q: reef has stored nothing yet (no database at %s)", key, d.path)}
}
