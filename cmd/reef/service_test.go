package main

import (
	"bytes"
	"encoding/xml"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeServiceHost is a Linux machine under a temporary root whose commands are recorded.
func fakeServiceHost(t *testing.T, env map[string]string) (serviceHost, *[]string) {
	t.Helper()
	var ran []string
	users := map[string]bool{}
	h := serviceHost{
		goos:       "linux",
		root:       t.TempDir(),
		euid:       0,
		getenv:     func(k string) string { return env[k] },
		userExists: func(name string) bool { return users[name] },
		chown: func(path, account string) error {
			ran = append(ran, "chown "+account+" "+path)
			return nil
		},
		run: func(argv ...string) error {
			ran = append(ran, strings.Join(argv, " "))
			if argv[0] == "useradd" {
				users[argv[len(argv)-1]] = true
			}
			return nil
		},
		output: func(argv ...string) (string, error) {
			ran = append(ran, strings.Join(argv, " "))
			return "active", nil
		},
		managerUp: func() bool { return true },
	}
	return h, &ran
}

func serviceRun(t *testing.T, h serviceHost, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := serviceCommand(h, args, &out, &errOut); code != 0 {
		t.Fatalf("reef service %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errOut.String())
	}
	return out.String()
}

// dryRunFile returns the file path of a --dry-run's output.
func dryRunFile(t *testing.T, out, path string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "==> "+path+" (mode ")
	if !ok {
		t.Fatalf("no %s in the dry run:\n%s", path, out)
	}
	_, rest, _ = strings.Cut(rest, "\n")
	for _, end := range []string{"\n==> ", "\n# would run: "} {
		rest, _, _ = strings.Cut(rest, end)
	}
	return rest
}

// TestServiceUnitPassesSystemdAnalyzeVerify: the system unit --dry-run prints passes
// `systemd-analyze verify` without a word, and the verifier does speak up for a broken unit.
// Without systemd-analyze the test skips, unless REEF_REQUIRE_SYSTEMD is set (.ci/run sets
// it after installing Debian's systemd, which needs no running systemd for this).
func TestServiceUnitPassesSystemdAnalyzeVerify(t *testing.T) {
	analyze, err := osexec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("REEF_REQUIRE_SYSTEMD") != "" {
			t.Fatal("REEF_REQUIRE_SYSTEMD is set but systemd-analyze is missing (apt-get install systemd)")
		}
		t.Skip("systemd-analyze is not installed (apt-get install systemd)")
	}
	h, ran := fakeServiceHost(t, map[string]string{"OPENAI_API_KEY": "sk-secret-value-1"})
	h.euid = 1000 // --dry-run needs no root
	for _, args := range [][]string{
		{"install", "--dry-run", "--memory-max", "512M"},
		{"install", "--dry-run", "--user"},
	} {
		env := map[string]string{"OPENAI_API_KEY": "sk-secret-value-1", "HOME": "/home/alice"}
		h.getenv = func(k string) string { return env[k] }
		out := serviceRun(t, h, args...)
		if strings.Contains(out, "sk-secret-value-1") {
			t.Fatalf("--dry-run printed a secret:\n%s", out)
		}
		unitPath := "/etc/systemd/system/reef.service"
		if args[len(args)-1] == "--user" {
			unitPath = "/home/alice/.config/systemd/user/reef.service"
		}
		unit := dryRunFile(t, out, unitPath)
		for _, want := range []string{"Restart=on-failure", "KillSignal=SIGTERM", "ProtectSystem=strict",
			"PrivateTmp=true", "NoNewPrivileges=true", "EnvironmentFile=", "ReadWritePaths=", "ExecStart=", "ExecReload=/bin/kill -HUP $MAINPID"} {
			if !strings.Contains(unit, "\n"+want) {
				t.Errorf("%v: the unit has no %q:\n%s", args, want, unit)
			}
		}
		if args[2] == "--memory-max" && !strings.Contains(unit, "\nMemoryMax=512M\n") {
			t.Errorf("no MemoryMax=512M:\n%s", unit)
		}
		if msg := systemdVerify(t, analyze, unit); msg != "" {
			t.Errorf("%v: systemd-analyze verify:\n%s\nunit:\n%s", args, msg, unit)
		}
	}
	if len(*ran) != 0 {
		t.Errorf("--dry-run ran %v", *ran)
	}
	// The verifier is not silent about everything: a broken unit gets a word.
	if msg := systemdVerify(t, analyze, "[Service]\nExecStart=/bin/true\nKillMode=bogus\nNoSuchKey=1\n"); msg == "" {
		t.Error("systemd-analyze verify said nothing about a broken unit: this test cannot fail")
	}
}

// systemdVerify returns what `systemd-analyze verify` says about unit ("" when all is well).
func systemdVerify(t *testing.T, analyze, unit string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "reef.service")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := osexec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil {
		return string(out) + err.Error()
	}
	return strings.TrimSpace(string(out))
}

// TestServiceInstallUninstall: install as root writes the unit (0644) and the environment file
// (0600) holding the ${VAR}s the config's values name that are set (not those of comments),
// creates the user, enables the unit; status reports it; uninstall removes both files.
func TestServiceInstallUninstall(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-it's-a-secret", "MY_BOT_TOKEN": "123:abc", "IN_COMMENT": "no",
		"HOME": "/root"}
	h, ran := fakeServiceHost(t, env)
	config := "# a comment naming ${IN_COMMENT}\nproviders:\n  openai:\n    apiKey: ${OPENAI_API_KEY}\n" +
		"channels:\n  telegram:\n    botToken: \"${MY_BOT_TOKEN}\"\n    allowFrom: [\"${UNSET_ONE}\"]\n"
	if err := os.MkdirAll(h.path("/var/lib/reef"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.path("/var/lib/reef/reef.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	out := serviceRun(t, h, "install", "--memory-max", "1G")
	for _, want := range []string{"created the system user \"reef\"", "journalctl -u reef -f"} {
		if !strings.Contains(out, want) {
			t.Errorf("install did not say %q:\n%s", want, out)
		}
	}
	unit := readServiceFile(t, h, "/etc/systemd/system/reef.service", 0o644)
	for _, want := range []string{"User=reef\n", "Environment=REEF_HOME=/var/lib/reef\n", "ReadWritePaths=/var/lib/reef\n",
		"EnvironmentFile=/etc/reef/reef.env\n", "MemoryMax=1G\n"} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit has no %q:\n%s", want, unit)
		}
	}
	envFile := readServiceFile(t, h, "/etc/reef/reef.env", 0o600)
	for _, want := range []string{"MY_BOT_TOKEN='123:abc'\n", `OPENAI_API_KEY="sk-it's-a-secret"` + "\n"} {
		if !strings.Contains(envFile, want) {
			t.Errorf("the environment file has no %q:\n%s", want, envFile)
		}
	}
	if strings.Contains(envFile, "IN_COMMENT") || strings.Contains(envFile, "UNSET_ONE") || strings.Contains(envFile, "HOME") {
		t.Errorf("the environment file holds a variable the config's values do not name or that is unset:\n%s", envFile)
	}
	wantRan := []string{"useradd --system --user-group --home-dir /var/lib/reef --shell /usr/sbin/nologin --comment reef gateway reef",
		"chown reef " + h.path("/var/lib/reef"), "systemctl daemon-reload", "systemctl enable --now reef.service"}
	if strings.Join(*ran, "\n") != strings.Join(wantRan, "\n") {
		t.Errorf("install ran\n%s\nwant\n%s", strings.Join(*ran, "\n"), strings.Join(wantRan, "\n"))
	}

	// A second install (an upgrade of the unit) keeps the user and rewrites the files.
	*ran = nil
	serviceRun(t, h, "install")
	if strings.Contains(strings.Join(*ran, "\n"), "useradd") {
		t.Errorf("a second install created the user again: %v", *ran)
	}
	if unit := readServiceFile(t, h, "/etc/systemd/system/reef.service", 0o644); strings.Contains(unit, "MemoryMax") {
		t.Errorf("the reinstalled unit kept MemoryMax:\n%s", unit)
	}

	if out := serviceRun(t, h, "status"); !strings.Contains(out, "installed: /etc/systemd/system/reef.service") || !strings.Contains(out, "active: active") {
		t.Errorf("status:\n%s", out)
	}
	*ran = nil
	out = serviceRun(t, h, "uninstall")
	for _, p := range []string{"/etc/systemd/system/reef.service", "/etc/reef/reef.env"} {
		if _, err := os.Stat(h.path(p)); !os.IsNotExist(err) {
			t.Errorf("%s is still there after uninstall (%v)", p, err)
		}
	}
	if _, err := os.Stat(h.path("/var/lib/reef/reef.yaml")); err != nil {
		t.Errorf("uninstall removed the data: %v", err)
	}
	if got := strings.Join(*ran, "\n"); got != "systemctl disable --now reef.service\nsystemctl daemon-reload" {
		t.Errorf("uninstall ran\n%s", got)
	}
	if !strings.Contains(out, "kept /var/lib/reef") {
		t.Errorf("uninstall did not say what it kept:\n%s", out)
	}
	if out := serviceRun(t, h, "status"); !strings.Contains(out, "not installed") {
		t.Errorf("status after uninstall:\n%s", out)
	}
}

func readServiceFile(t *testing.T, h serviceHost, path string, mode os.FileMode) string {
	t.Helper()
	fi, err := os.Stat(h.path(path))
	if err != nil {
		t.Fatalf("install wrote no %s: %v", path, err)
	}
	if fi.Mode().Perm() != mode {
		t.Errorf("%s has mode %04o, want %04o", path, fi.Mode().Perm(), mode)
	}
	b, err := os.ReadFile(h.path(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServiceUserUnitAndRoot: a system unit needs root (and says so); --user writes under the
// user's ~/.config with REEF_HOME as the shell has it, and a service manager that does not run
// gets the commands printed instead.
func TestServiceUserUnitAndRoot(t *testing.T) {
	h, ran := fakeServiceHost(t, map[string]string{"HOME": "/home/alice", "REEF_HOME": "/home/alice/reef", "USER": "alice"})
	h.euid = 1000
	var out, errOut bytes.Buffer
	if code := serviceCommand(h, []string{"install"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "needs root") {
		t.Fatalf("install as a user without --user: exit %d, stderr %q", code, errOut.String())
	}
	h.managerUp = func() bool { return false }
	got := serviceRun(t, h, "install", "--user")
	unit := readServiceFile(t, h, "/home/alice/.config/systemd/user/reef.service", 0o644)
	readServiceFile(t, h, "/home/alice/.config/reef/reef.env", 0o600)
	if strings.Contains(unit, "User=") || !strings.Contains(unit, "REEF_HOME=/home/alice/reef\n") || !strings.Contains(unit, "WantedBy=default.target") {
		t.Errorf("user unit:\n%s", unit)
	}
	if !strings.Contains(got, "systemctl --user enable --now reef.service") || !strings.Contains(got, "does not run here") {
		t.Errorf("install without a running systemd:\n%s", got)
	}
	if strings.Contains(strings.Join(*ran, "\n"), "systemctl") || strings.Contains(strings.Join(*ran, "\n"), "useradd") {
		t.Errorf("ran %v", *ran)
	}
	if out := serviceRun(t, h, "status", "--user"); !strings.Contains(out, "active: unknown") {
		t.Errorf("status without systemd:\n%s", out)
	}
}

// TestServiceLaunchdPlist: on macOS the agent's plist is well-formed XML with the secrets
// escaped, mode 0600, and --dry-run hides them.
func TestServiceLaunchdPlist(t *testing.T) {
	env := map[string]string{"HOME": "/Users/bob", "OPENAI_API_KEY": "sk-<&>\"secret"}
	h, ran := fakeServiceHost(t, env)
	h.goos, h.euid = "darwin", 501
	dry := serviceRun(t, h, "install", "--dry-run")
	if strings.Contains(dry, "secret") {
		t.Errorf("--dry-run printed a secret:\n%s", dry)
	}
	serviceRun(t, h, "install")
	plist := readServiceFile(t, h, "/Users/bob/Library/LaunchAgents/dev.reefgw.reef.plist", 0o600)
	var doc struct {
		Dict struct {
			Keys    []string `xml:"key"`
			Strings []string `xml:"string"`
			Dicts   []struct {
				Keys    []string `xml:"key"`
				Strings []string `xml:"string"`
			} `xml:"dict"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal([]byte(plist), &doc); err != nil {
		t.Fatalf("the plist is not XML: %v\n%s", err, plist)
	}
	envDict := doc.Dict.Dicts[0]
	found := false
	for i, k := range envDict.Keys {
		if k == "OPENAI_API_KEY" && envDict.Strings[i] == env["OPENAI_API_KEY"] {
			found = true
		}
	}
	if !found {
		t.Errorf("the plist's environment lacks OPENAI_API_KEY as set:\n%s", plist)
	}
	if got := strings.Join(*ran, "\n"); got != "launchctl bootstrap gui/501 /Users/bob/Library/LaunchAgents/dev.reefgw.reef.plist" {
		t.Errorf("install ran %q", got)
	}
}

// TestVersionLine: `reef version` shows the commit and date a release build stamps.
func TestVersionLine(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	if got := versionLine(); !strings.HasPrefix(got, "reef dev (go") {
		t.Errorf("unstamped: %q", got)
	}
	version, commit, date = "v1.2.3", "0123456789abcdef0123", "2026-12-06T07:00:00Z"
	if got := versionLine(); !strings.HasPrefix(got, "reef v1.2.3 (commit 0123456789ab, built 2026-12-06T07:00:00Z, go") {
		t.Errorf("stamped: %q", got)
	}
}
