// Command reef is a self-hosted AI assistant gateway: it connects LLM agents to the places
// people already talk and lets them act in a workspace.
//
//	reef chat      talk to the agent in this terminal (or pipe lines in)
//	reef gateway   run every configured channel until SIGINT/SIGTERM
//	reef init      create $REEF_HOME with a starter workspace
//	reef doctor    check the configuration, data directory, workspace and providers
//	reef events    follow the running gateway's run events (tools, plans, answers)
//	reef sessions  list conversations, show one, export a transcript (JSONL or Markdown)
//	reef security  audit the security posture: each problem with its fix
//	reef backup    write a copy of the database (and the workspaces); reef restore puts one back
//	reef version   print the version
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools/exec"
)

// version, commit and date are set at build time with -ldflags "-X main.version=..."
// (go run ./internal/release stamps all three).
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// processStart is when the process started, for the start-to-ready measurement.
var processStart = time.Now()

const usage = `reef — a self-hosted AI assistant gateway

Usage:
  reef chat    [-config FILE]   talk to your agent in this terminal; pipe lines in to script it
  reef gateway [-config FILE] [-pprof ADDR]
                                run every configured channel until Ctrl-C / SIGTERM, and the
                                web UI (Control UI, WebChat, API) on http://127.0.0.1:18789/
                                (gateway.http.listen; reef status shows its address and token)
  reef init    [--fresh]        create $REEF_HOME (default ~/.reef) with a starter workspace;
                                --fresh replaces an empty (0-byte) reef.db, keeping it aside
  reef doctor  [-config FILE]   check config, data directory, workspace and provider reachability
  reef status  [-config FILE] [-json]
                                channels, sessions and pending pairing requests (live while reef runs)
  reef reload  [-config FILE] [-json]
                                make the running gateway re-read reef.yaml (as SIGHUP or saving the
                                file does): applied without a restart where the setting allows
  reef events  [-session KEY] [-json]
                                follow the running gateway's run events: tools, plans, answers
  reef sessions list | show <key> | export <key> [-format jsonl|md] [-o FILE]
                                conversations: who, tokens, last update; one transcript; a full export
  reef pairing list | approve <channel> <code> | deny <channel> <code> [-json]
                                decide who may talk to your bots
  reef cron list | add ... | rm|run|runs|enable|disable <id> [-json]
                                scheduled jobs (next runs shown in each job's time zone)
  reef usage   [-days N] [-json]
                                tokens and cost per day, agent, model and channel (models.<ref>.cost)
  reef memory status | index [--force] | search QUERY [-agent ID] [-json]
                                the agents' memory index: what is indexed, rebuild it, search it
  reef skills list [-agent ID] [-json] | info NAME
                                the agent's skills: where each comes from, available or why not
  reef security audit [-config FILE] [-json]
                                security posture: open doors, guests' tools, exec sandbox, webhooks,
                                file modes, secrets in reef.yaml; each problem with its fix
                                (exit status 1 when problems are found)
  reef security approvals [approve <id> [always] | deny <id> | revoke <prefix>] [-json]
                                exec approvals: waiting commands, recent decisions, prefixes allowed always
  reef backup  [-o FILE] [--workspace] [-json]
                                a consistent copy of the database (reef keeps serving), gzip-compressed,
                                in $REEF_HOME/backups; --workspace also writes the workspaces as .tar.gz
  reef restore [-json] FILE     check a backup and put it in place of the database (reef stopped);
                                the database it replaces is kept as reef.db.before-restore-<time>
  reef migrate --to postgres [-url URL] [-json]
                                copy the bbolt database into PostgreSQL (reef stopped; a backup first),
                                verified by counting; then set storage.driver: postgres (docs/scaling.md)
  reef cluster status [-json] | forget NODE
                                cluster mode: nodes, heartbeats, partitions, who holds each channel's
                                inbound loop and the timer; forget a node gone for good
  reef import openclaw [--from DIR] [--dry-run] [--force]
                                move an OpenClaw installation to reef: config, workspaces, skills,
                                cron jobs; secrets become ${ENV} references (docs/openclaw.md)
  reef service install | uninstall | status [--user] [--dry-run] [--memory-max SIZE]
                                run the gateway as a systemd service (launchd on macOS), secrets
                                in an environment file of mode 0600 (docs/operations.md)
  reef version                  print the version, commit and build date
  reef fake-llm [-addr ADDR]    serve a fake OpenAI-compatible model on loopback (try reef offline)

Configuration comes from $REEF_HOME/reef.yaml (see configs/reef.example.yaml) or, without a
file, from the environment: REEF_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
ANTHROPIC_BASE_URL, GEMINI_API_KEY, GEMINI_BASE_URL.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "chat":
		return runChat(args[1:], stdout, stderr)
	case "gateway":
		return runGateway(args[1:], stdout, stderr)
	case "init":
		return runInit(args[1:], stdout, stderr)
	case "doctor":
		return runDoctor(args[1:], stdout, stderr)
	case "status":
		return runStatus(args[1:], stdout, stderr)
	case "reload":
		return runReload(args[1:], stdout, stderr)
	case "events":
		return runEvents(args[1:], stdout, stderr)
	case "sessions":
		return runSessions(args[1:], stdout, stderr)
	case "pairing":
		return runPairing(args[1:], stdout, stderr)
	case "cron":
		return runCron(args[1:], stdout, stderr)
	case "usage":
		return runUsage(args[1:], stdout, stderr)
	case "memory":
		return runMemory(args[1:], stdout, stderr)
	case "skills":
		return runSkills(args[1:], stdout, stderr)
	case "security":
		return runSecurity(args[1:], stdout, stderr)
	case "backup":
		return runBackup(args[1:], stdout, stderr)
	case "restore":
		return runRestore(args[1:], stdout, stderr)
	case "migrate":
		return runMigrate(args[1:], stdout, stderr)
	case "cluster":
		return runCluster(args[1:], stdout, stderr)
	case "import":
		return runImport(args[1:], stdout, stderr)
	case "service":
		return runService(args[1:], stdout, stderr)
	case "fake-llm":
		return runFakeLLM(args[1:], stdout, stderr)
	case "exec-sandbox": // hidden: how the exec tool runs a command (tools/exec.SandboxMain)
		return exec.SandboxMain(args[1:], stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "reef: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// versionLine is what `reef version` prints: the version, and the commit and date when the
// build stamped them.
func versionLine() string {
	built := ""
	if commit != "" {
		built = "commit " + commit
		if len(commit) > 12 {
			built = "commit " + commit[:12]
		}
		built += ", "
	}
	if date != "" {
		built += "built " + date + ", "
	}
	return fmt.Sprintf("reef %s (%s%s, %s/%s)", version, built, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// startCommand parses the flags of a command that has only -config, then loads the
// configuration and opens the logs (to the log file when toFile). A nil cfg ends the command
// with code: 0 after the usage it was asked for, else after printing what went wrong.
func startCommand(name string, args []string, toFile bool, stdout, stderr io.Writer) (cfg *configs.Config, log zerolog.Logger, closeLog func(), code int) {
	flags, configPath := commandFlags(name, stderr)
	if code, ok := parseFlags(flags, args, stdout); !ok {
		return nil, log, nil, code
	}
	if cfg = configOrExplain(*configPath, stderr); cfg == nil {
		return nil, log, nil, 2
	}
	log, closeLog, err := newLogger(cfg, toFile)
	if err != nil {
		fmt.Fprintf(stderr, "reef: logs: %v\n", err)
		return nil, log, nil, 1
	}
	return cfg, log, closeLog, 0
}

// configOrExplain loads the configuration; on failure it prints what to fix and returns nil.
func configOrExplain(path string, stderr io.Writer) *configs.Config {
	cfg, err := loadConfig(path)
	if err == nil {
		return cfg
	}
	if errors.Is(err, configs.ErrNoProvider) {
		fmt.Fprintln(stderr, configs.NoProviderHelp())
		// The help replaces the no-provider problem, not the others (a typo in the file...).
		if others := otherProblems(err); len(others) > 0 {
			fmt.Fprintf(stderr, "reef: configuration problems:\n%v\n", errors.Join(others...))
		}
		return nil
	}
	fmt.Fprintf(stderr, "reef: configuration problems:\n%v\n", err)
	return nil
}

// adminConfig loads the configuration for commands that only read or change reef's records
// (status, sessions, pairing, cron): they need no LLM provider and none of the secrets, so a
// missing provider or an unset ${VAR} is fine.
func adminConfig(path string, stderr io.Writer) *configs.Config {
	cfg, err := loadConfig(path)
	if cfg != nil && err != nil && len(readOnlyProblems(err)) == 0 {
		return cfg
	}
	return configOrExplain(path, stderr)
}

// readOnlyProblems are the configuration problems that matter to a command that only reads:
// otherProblems without the unset ${VAR}s.
func readOnlyProblems(err error) []error {
	var out []error
	for _, p := range otherProblems(err) {
		if !errors.Is(p, configs.ErrUnsetVariable) {
			out = append(out, p)
		}
	}
	return out
}

// otherProblems returns the configuration problems in err other than the missing provider.
func otherProblems(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, otherProblems(e)...)
		}
		return out
	}
	if err == nil || errors.Is(err, configs.ErrNoProvider) {
		return nil
	}
	return []error{err}
}

// commandFlags returns a subcommand's flag set with the -config flag every command shares.
func commandFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	flags := newFlags(name, stderr)
	return flags, flags.String("config", "", "config file (default $REEF_HOME/reef.yaml)")
}
