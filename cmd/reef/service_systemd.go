package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/reefgw/reef/configs"
)

// systemdUnit is reef's systemd unit. The hardening leaves exec's sandbox working: Landlock
// and unprivileged user namespaces (bwrap) need no privileges, so NoNewPrivileges takes
// nothing from them (exec sets no_new_privs itself before Landlock).
var systemdUnit = template.Must(template.New("reef.service").Parse(`# reef's gateway, written by ` + "`reef service install`" + `; ` + "`reef service uninstall`" + ` removes it.
# Secrets are in {{.EnvFile}} (mode 0600). Logs: journalctl {{if .UserUnit}}--user {{end}}-u reef -f
[Unit]
Description=reef AI assistant gateway
Documentation=https://github.com/reefgw/reef/blob/main/docs/operations.md
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
{{- if .Account}}
User={{.Account}}
Group={{.Account}}
{{- end}}
Environment=REEF_HOME={{.Home}}
EnvironmentFile={{.EnvFile}}
ExecStart={{.Exec}}
# systemctl reload reef: re-read reef.yaml without a restart (docs/configuration.md)
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5s
# SIGTERM stops reef gracefully (runs stopped, writes committed, replies in flight sent);
# processes the exec tool left get SIGKILL only after that.
KillSignal=SIGTERM
KillMode=mixed
TimeoutStopSec=30s
StandardOutput=journal
StandardError=journal
SyslogIdentifier=reef
ProtectSystem=strict
ReadWritePaths={{.Writable}}
PrivateTmp=true
NoNewPrivileges=true
{{- if .MemoryMax}}
MemoryMax={{.MemoryMax}}
{{- end}}

[Install]
WantedBy={{.WantedBy}}
`))

// systemdPlan is a systemd unit and its environment file: a system unit run as the user
// "reef" with its home in /var/lib/reef, or (--user) a unit of the calling user.
func (h serviceHost) systemdPlan(o serviceOptions) (servicePlan, error) {
	p := servicePlan{status: []string{"systemctl", "is-active", "reef.service"}}
	var unitPath, envPath, account, wantedBy string
	systemctl := []string{"systemctl"}
	if o.user {
		userHome := h.getenv("HOME")
		if userHome == "" {
			return p, fmt.Errorf("$HOME is not set: a user unit lives under it")
		}
		configHome := h.getenv("XDG_CONFIG_HOME")
		if configHome == "" {
			configHome = filepath.Join(userHome, ".config")
		}
		unitPath = filepath.Join(configHome, "systemd", "user", "reef.service")
		envPath = filepath.Join(configHome, "reef", "reef.env")
		wantedBy = "default.target"
		systemctl = append(systemctl, "--user")
		p.status = []string{"systemctl", "--user", "is-active", "reef.service"}
		p.home = o.home
		if p.home == "" {
			p.home = filepath.Dir(configs.DefaultPath(h.getenv))
		}
		p.notes = append(p.notes, "a user unit runs while you are logged in; to keep it running after you log out: loginctl enable-linger "+orDollarUser(h.getenv("USER")),
			"logs: journalctl --user -u reef -f")
	} else {
		unitPath, envPath, account, wantedBy = "/etc/systemd/system/reef.service", "/etc/reef/reef.env", serviceAccount, "multi-user.target"
		p.home = o.home
		if p.home == "" {
			p.home = "/var/lib/reef"
		}
		p.homeUser = account
		if !h.userExists(account) {
			p.before = append(p.before, []string{"useradd", "--system", "--user-group", "--home-dir", p.home,
				"--shell", "/usr/sbin/nologin", "--comment", "reef gateway", account})
		}
		p.notes = append(p.notes, "logs: journalctl -u reef -f")
	}
	p.home = filepath.Clean(p.home)
	if err := unitSafe("--home", p.home); err != nil {
		return p, err
	}
	bin, err := serviceBinary(o)
	if err != nil {
		return p, err
	}
	if err := unitSafe("the reef binary", bin); err != nil {
		return p, err
	}
	if account != "" && (strings.HasPrefix(bin, "/root/") || strings.HasPrefix(bin, "/home/")) {
		p.notes = append(p.notes, fmt.Sprintf("the user %q may not reach %s: install reef where it can (sudo install %s /usr/local/bin/reef) and install the service from there", account, bin, bin))
	}
	configPath, configText, cfg, err := h.serviceConfig(o, p.home)
	if err != nil {
		return p, err
	}
	exec := bin + " gateway"
	if o.config != "" {
		if err := unitSafe("-config", configPath); err != nil {
			return p, err
		}
		exec += " -config " + configPath
	}
	if configText == nil {
		p.notes = append(p.notes, fmt.Sprintf("no %s yet: reef runs on its defaults and the environment file until you write one (reef init, as the service's user)", configPath))
	}
	writable := writablePaths(p.home, cfg)
	for _, w := range writable {
		if err := unitSafe("a path reef writes", w); err != nil {
			return p, err
		}
	}
	secrets, err := serviceSecrets(configText, h.getenv)
	if err != nil {
		return p, err
	}
	var unit strings.Builder
	err = systemdUnit.Execute(&unit, map[string]any{
		"UserUnit": o.user, "Account": account, "Home": p.home, "EnvFile": envPath, "Exec": exec,
		"Writable": strings.Join(writable, " "), "MemoryMax": o.memoryMax, "WantedBy": wantedBy,
	})
	if err != nil {
		return p, err
	}
	p.files = []serviceFile{
		{path: unitPath, mode: 0o644, text: unit.String()},
		{path: envPath, mode: 0o600, text: envFileText(secrets, false), shown: envFileText(secrets, true)},
	}
	p.after = [][]string{append(append([]string{}, systemctl...), "daemon-reload"),
		append(append([]string{}, systemctl...), "enable", "--now", "reef.service")}
	p.remove = [][]string{append(append([]string{}, systemctl...), "disable", "--now", "reef.service")}
	p.reload = [][]string{append(append([]string{}, systemctl...), "daemon-reload")}
	if account != "" && !h.userExists(account) {
		p.notes = append([]string{fmt.Sprintf("created the system user %q (home %s) to run reef", account, p.home)}, p.notes...)
	}
	return p, nil
}

// envFileText is the environment file holding secrets (name, value).
// hide replaces each value with a note of its length (for --dry-run).
func envFileText(secrets [][2]string, hide bool) string {
	var b strings.Builder
	b.WriteString("# reef's secrets, written by `reef service install`: the ${VAR}s reef.yaml names (and the\n" +
		"# variables reef reads by default) that were set in the installing shell. Keep it mode 0600.\n")
	for _, s := range secrets {
		if hide {
			fmt.Fprintf(&b, "%s=<hidden: %d characters>\n", s[0], len(s[1]))
			continue
		}
		fmt.Fprintf(&b, "%s=%s\n", s[0], envFileValue(s[1]))
	}
	return b.String()
}

// orDollarUser is name, or $USER for the shell to fill in when it is unknown.
func orDollarUser(name string) string {
	if name == "" {
		return "$USER"
	}
	return name
}
