package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// `reef service install | uninstall | status` runs reef's gateway under the machine's service
// manager: a systemd unit on Linux (service_systemd.go), a launchd agent on macOS
// (service_launchd.go). The files come from Go templates; --dry-run prints them.

const serviceUsage = `Usage:
  reef service install   [--user] [--dry-run] [--memory-max SIZE] [--home DIR] [-config FILE]
                         run reef gateway as a service: a systemd system unit run as the user
                         "reef" (created when missing; run as root), or with --user a unit of
                         your own user; on macOS a launchd agent. Secrets: the ${VAR}s reef.yaml
                         names that are set in this shell go to an environment file (mode 0600).
  reef service uninstall [--user] [--dry-run]
                         stop the service and remove its unit and environment file (the data
                         directory and the user stay)
  reef service status    [--user]
                         whether the service is installed and running
`

// serviceOptions are what a `reef service` command was asked to do.
type serviceOptions struct {
	user      bool   // a unit of the calling user (systemd --user) instead of a system unit
	dryRun    bool   // print the files and commands, change nothing
	memoryMax string // MemoryMax= of the unit, "" for none
	home      string // REEF_HOME of the service
	config    string // -config for the gateway, "" for $REEF_HOME/reef.yaml
	binary    string // the reef to run, default this one
}

// serviceHost is the machine a `reef service` command changes. Tests give one whose root is
// a temporary directory and whose commands are recorded instead of run.
type serviceHost struct {
	goos       string
	root       string // prefix of every path read, written or removed; "" for /
	euid       int
	getenv     func(string) string
	userExists func(name string) bool
	chown      func(path, account string) error
	run        func(argv ...string) error           // runs a command that changes the machine
	output     func(argv ...string) (string, error) // runs a command that only asks
	managerUp  func() bool                          // whether the service manager runs (systemd as PID 1)
}

// serviceAccount is the system user a system unit runs as.
const serviceAccount = "reef"

// serviceFile is one file a service install writes.
type serviceFile struct {
	path  string // as on the machine (without the host's root)
	mode  fs.FileMode
	text  string
	shown string // what --dry-run prints (the text with secrets hidden), "" for text
}

// servicePlan is what an install writes and runs, and what an uninstall removes.
type servicePlan struct {
	files    []serviceFile
	before   [][]string // commands run before the files are written (creating the user)
	after    [][]string // commands run after (reload, enable, start)
	remove   [][]string // commands an uninstall runs before removing the files
	reload   [][]string // commands an uninstall runs after removing them
	status   []string   // the command whose output says whether it runs
	notes    []string   // what the person installing must know
	homeUser string     // the account that owns the service's home, "" for the caller
	home     string
}

func runService(args []string, stdout, stderr io.Writer) int {
	return serviceCommand(defaultServiceHost(), args, stdout, stderr)
}

func defaultServiceHost() serviceHost {
	return serviceHost{
		goos:   runtime.GOOS,
		euid:   os.Geteuid(),
		getenv: os.Getenv,
		userExists: func(name string) bool {
			_, err := user.Lookup(name)
			return err == nil
		},
		chown: chownAccount,
		run: func(argv ...string) error {
			cmd := osexec.Command(argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			return cmd.Run()
		},
		output: func(argv ...string) (string, error) {
			out, err := osexec.Command(argv[0], argv[1:]...).CombinedOutput()
			return strings.TrimSpace(string(out)), err
		},
		managerUp: func() bool {
			if runtime.GOOS == "darwin" {
				return true // launchd
			}
			_, err := os.Stat("/run/systemd/system")
			return err == nil
		},
	}
}

// chownAccount gives path to account and its primary group.
func chownAccount(path, account string) error {
	u, err := user.Lookup(account)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

func serviceCommand(h serviceHost, args []string, stdout, stderr io.Writer) int {
	flags := newFlags("service", stderr)
	var o serviceOptions
	flags.BoolVar(&o.user, "user", false, "a unit of your own user (systemd --user) instead of a system unit")
	flags.BoolVar(&o.dryRun, "dry-run", false, "print the files and commands, change nothing")
	flags.StringVar(&o.memoryMax, "memory-max", "", "the unit's MemoryMax (e.g. 1G): the kernel stops reef above it")
	flags.StringVar(&o.home, "home", "", "REEF_HOME of the service (default /var/lib/reef for a system unit, else $REEF_HOME)")
	flags.StringVar(&o.config, "config", "", "config file the gateway reads (default $REEF_HOME/reef.yaml of the service)")
	flags.StringVar(&o.binary, "binary", "", "the reef binary to run (default this one)")
	rest, err := parseInterspersed(flags, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, serviceUsage)
			return 0
		}
		fmt.Fprint(stderr, serviceUsage)
		return 2
	}
	if len(rest) == 1 && isHelp(rest[0]) {
		fmt.Fprint(stdout, serviceUsage)
		return 0
	}
	if len(rest) != 1 {
		fmt.Fprint(stderr, serviceUsage)
		return 2
	}
	if h.goos == "darwin" {
		o.user = true // a launchd agent of the calling user
	}
	switch rest[0] {
	case "install":
		err = serviceInstall(h, o, stdout)
	case "uninstall":
		err = serviceUninstall(h, o, stdout)
	case "status":
		err = serviceStatus(h, o, stdout)
	default:
		fmt.Fprint(stderr, serviceUsage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef service %s: %v\n", rest[0], err)
		return 1
	}
	return 0
}

// plan returns what installing the service writes and runs on h.
func (h serviceHost) plan(o serviceOptions) (servicePlan, error) {
	switch h.goos {
	case "linux":
		return h.systemdPlan(o)
	case "darwin":
		return h.launchdPlan(o)
	}
	return servicePlan{}, fmt.Errorf("reef service knows systemd (Linux) and launchd (macOS), not %s", h.goos)
}

func serviceInstall(h serviceHost, o serviceOptions, stdout io.Writer) error {
	if o.memoryMax != "" && !memoryMaxPattern.MatchString(o.memoryMax) {
		return fmt.Errorf("--memory-max %q: want a size like 512M, 2G or a percentage like 50%%", o.memoryMax)
	}
	if !o.user && h.euid != 0 && !o.dryRun {
		return errors.New("a system unit needs root: run it with sudo, or give --user for a unit of your own user (--dry-run shows the files)")
	}
	p, err := h.plan(o)
	if err != nil {
		return err
	}
	if o.dryRun {
		printPlan(stdout, p)
		return nil
	}
	for _, argv := range p.before {
		fmt.Fprintf(stdout, "running: %s\n", strings.Join(argv, " "))
		if err := h.run(argv...); err != nil {
			return fmt.Errorf("%s: %w", argv[0], err)
		}
	}
	if err := os.MkdirAll(h.path(p.home), 0o700); err != nil {
		return fmt.Errorf("home: %w", err)
	}
	if p.homeUser != "" {
		if err := h.chown(h.path(p.home), p.homeUser); err != nil {
			return fmt.Errorf("home: %w", err)
		}
	}
	for _, f := range p.files {
		if err := writeServiceFile(h.path(f.path), f); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (mode %04o)\n", f.path, f.mode)
	}
	if err := h.runAfter(p.after, stdout); err != nil {
		return err
	}
	for _, n := range p.notes {
		fmt.Fprintln(stdout, n)
	}
	return nil
}

// runAfter runs the service manager's commands, or says why not when it does not run here.
func (h serviceHost) runAfter(cmds [][]string, stdout io.Writer) error {
	if len(cmds) == 0 {
		return nil
	}
	if !h.managerUp() {
		fmt.Fprintln(stdout, "the service manager does not run here (no /run/systemd/system); run these where it does:")
		for _, argv := range cmds {
			fmt.Fprintf(stdout, "  %s\n", strings.Join(argv, " "))
		}
		return nil
	}
	for _, argv := range cmds {
		fmt.Fprintf(stdout, "running: %s\n", strings.Join(argv, " "))
		if err := h.run(argv...); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
		}
	}
	return nil
}

// writeServiceFile writes f at path with its mode, also when the file was there with another.
func writeServiceFile(path string, f serviceFile) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(f.text), f.mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, f.mode); err != nil { // WriteFile's mode is masked by the umask
		return err
	}
	return os.Rename(tmp, path)
}

func printPlan(w io.Writer, p servicePlan) {
	for _, argv := range p.before {
		fmt.Fprintf(w, "# would run: %s\n", strings.Join(argv, " "))
	}
	for _, f := range p.files {
		fmt.Fprintf(w, "==> %s (mode %04o) <==\n", f.path, f.mode)
		text := f.text
		if f.shown != "" {
			text = f.shown
		}
		fmt.Fprint(w, text)
		fmt.Fprintln(w)
	}
	for _, argv := range p.after {
		fmt.Fprintf(w, "# would run: %s\n", strings.Join(argv, " "))
	}
}

func serviceUninstall(h serviceHost, o serviceOptions, stdout io.Writer) error {
	if !o.user && h.euid != 0 && !o.dryRun {
		return errors.New("a system unit needs root: run it with sudo (or give --user for your own user's unit)")
	}
	p, err := h.plan(o)
	if err != nil {
		return err
	}
	installed := false
	for _, f := range p.files {
		if _, err := os.Stat(h.path(f.path)); err == nil {
			installed = true
		}
	}
	if !installed {
		fmt.Fprintf(stdout, "not installed (no %s)\n", p.files[0].path)
		return nil
	}
	if o.dryRun {
		for _, argv := range p.remove {
			fmt.Fprintf(stdout, "# would run: %s\n", strings.Join(argv, " "))
		}
		for _, f := range p.files {
			fmt.Fprintf(stdout, "# would remove %s\n", f.path)
		}
		return nil
	}
	if h.managerUp() {
		for _, argv := range p.remove {
			fmt.Fprintf(stdout, "running: %s\n", strings.Join(argv, " "))
			if err := h.run(argv...); err != nil { // stopped already, or never enabled: go on
				fmt.Fprintf(stdout, "(%s: %v)\n", argv[0], err)
			}
		}
	}
	for _, f := range p.files {
		if err := os.Remove(h.path(f.path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		fmt.Fprintf(stdout, "removed %s\n", f.path)
	}
	if err := h.runAfter(p.reload, stdout); err != nil {
		return err
	}
	who := ""
	if p.homeUser != "" {
		who = fmt.Sprintf(" and the user %q (userdel %s removes it)", p.homeUser, p.homeUser)
	}
	fmt.Fprintf(stdout, "kept %s (the database, workspaces and backups)%s\n", p.home, who)
	return nil
}

func serviceStatus(h serviceHost, o serviceOptions, stdout io.Writer) error {
	p, err := h.plan(o)
	if err != nil {
		return err
	}
	unit := p.files[0].path
	if _, err := os.Stat(h.path(unit)); err != nil {
		fmt.Fprintf(stdout, "not installed (no %s); `reef service install` installs it\n", unit)
		return nil
	}
	fmt.Fprintf(stdout, "installed: %s\n", unit)
	if !h.managerUp() {
		fmt.Fprintln(stdout, "active: unknown (the service manager does not run here); `reef status` asks a running gateway")
		return nil
	}
	out, _ := h.output(p.status...) // is-active exits non-zero when inactive: its word is the answer
	if out == "" {
		out = "unknown"
	}
	if _, state, ok := strings.Cut(out, "\tstate = "); ok { // launchctl print
		out, _, _ = strings.Cut(state, "\n")
	}
	fmt.Fprintf(stdout, "active: %s\n", out)
	return nil
}

// path is p on the host (under its root).
func (h serviceHost) path(p string) string {
	if h.root == "" {
		return p
	}
	return filepath.Join(h.root, p)
}
