package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/reefgw/reef/configs"
)

// launchdLabel names reef's launchd job.
const launchdLabel = "dev.reefgw.reef"

// launchdPlist is reef's launchd agent. launchd has no environment file: the secrets are in
// the plist's EnvironmentVariables, so the plist is mode 0600.
var launchdPlist = template.Must(template.New("plist").Funcs(template.FuncMap{"xml": xmlText}).Parse(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- reef's gateway, written by reef service install; reef service uninstall removes it. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{{.Label}}</string>
	<key>ProgramArguments</key>
	<array>
{{- range .Args}}
		<string>{{xml .}}</string>
{{- end}}
	</array>
	<key>EnvironmentVariables</key>
	<dict>
{{- range .Env}}
		<key>{{xml (index . 0)}}</key>
		<string>{{xml (index . 1)}}</string>
{{- end}}
	</dict>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ExitTimeOut</key>
	<integer>30</integer>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardOutPath</key>
	<string>{{xml .Log}}</string>
	<key>StandardErrorPath</key>
	<string>{{xml .Log}}</string>
</dict>
</plist>
`))

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// launchdPlan is a launchd agent of the calling user (macOS).
func (h serviceHost) launchdPlan(o serviceOptions) (servicePlan, error) {
	home := h.getenv("HOME")
	if home == "" {
		return servicePlan{}, fmt.Errorf("$HOME is not set: a launchd agent lives under it")
	}
	domain := "gui/" + strconv.Itoa(h.euid)
	plistPath := filepath.Join(home, "Library", "LaunchAgents", launchdLabel+".plist")
	p := servicePlan{
		home:   o.home,
		after:  [][]string{{"launchctl", "bootstrap", domain, plistPath}},
		remove: [][]string{{"launchctl", "bootout", domain + "/" + launchdLabel}},
		status: []string{"launchctl", "print", domain + "/" + launchdLabel},
	}
	if p.home == "" {
		p.home = filepath.Dir(configs.DefaultPath(h.getenv))
	}
	bin, err := serviceBinary(o)
	if err != nil {
		return p, err
	}
	_, configText, _, err := h.serviceConfig(o, p.home)
	if err != nil {
		return p, err
	}
	args := []string{bin, "gateway"}
	if o.config != "" {
		args = append(args, "-config", o.config)
	}
	secrets, err := serviceSecrets(configText, h.getenv)
	if err != nil {
		return p, err
	}
	env := append([][2]string{{"REEF_HOME", p.home}}, secrets...)
	logPath := filepath.Join(p.home, "logs", "gateway.log")
	hidden := [][2]string{env[0]}
	for _, s := range secrets {
		hidden = append(hidden, [2]string{s[0], fmt.Sprintf("<hidden: %d characters>", len(s[1]))})
	}
	var text, shown strings.Builder
	data := map[string]any{"Label": launchdLabel, "Args": args, "Env": env, "Log": logPath}
	if err := launchdPlist.Execute(&text, data); err != nil {
		return p, err
	}
	data["Env"] = hidden
	if err := launchdPlist.Execute(&shown, data); err != nil {
		return p, err
	}
	p.files = []serviceFile{{path: plistPath, mode: 0o600, text: text.String(), shown: shown.String()}}
	p.notes = []string{"logs: tail -f " + logPath, "a launchd agent runs while you are logged in"}
	return p, nil
}
