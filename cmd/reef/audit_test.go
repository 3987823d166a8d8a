package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/tools/exec"
)

// unsafeYAML opens every door the audit knows of.
const unsafeYAML = `providers:
  openai:
    apiKey: sk-live-written-in-the-file
tools:
  exec:
    sandbox: "off"
    approvals: "off"
channels:
  telegram:
    botToken: "` + tgToken + `"
    mode: webhook
    webhookUrl: https://bot.example.com/telegram
    webhookSecret: ${TG_SECRET}
    webhookListen: 0.0.0.0:8443
    dmPolicy: open
    allowFrom: ["*"]
    groups: ["*"]
    tools: {allow: [exec, write]}
  feishu:
    appId: cli_audit
    appSecret: ${FEISHU_APP_SECRET}
    mode: webhook
    verificationToken: ${FEISHU_VERIFICATION_TOKEN}
    webhookListen: ":9000"
`

// auditJSON runs `reef security audit -json` and decodes its answer.
func auditJSON(t *testing.T, e env, args ...string) (audit, result) {
	t.Helper()
	res := reef(t, e, "", append([]string{"security", "audit", "-json"}, args...)...)
	var a audit
	if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
		t.Fatalf("security audit -json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	return a, res
}

// TestSecurityAuditFindsEveryProblem: on a deliberately unsafe setup the audit lists each
// problem with its fix, in text and in JSON, and exits 1.
func TestSecurityAuditFindsEveryProblem(t *testing.T) {
	srv := newFake(t)
	home, e := writeConfig(t, srv, unsafeYAML)
	e["TG_SECRET"] = "short"
	e["FEISHU_APP_SECRET"] = "feishu-app-secret-value"
	e["FEISHU_VERIFICATION_TOKEN"] = "feishu-verification-token"
	if res := reef(t, e, "", "init"); res.code != 0 {
		t.Fatalf("init: %s", res.stderr)
	}
	yaml, data := filepath.Join(home, "reef.yaml"), filepath.Join(home, "data")
	if err := os.Chmod(yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o755); err != nil {
		t.Fatal(err)
	}

	res := reef(t, e, "", "security", "audit")
	if res.code != 1 {
		t.Errorf("security audit: exit %d, want 1:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"✗ channels.telegram.dmPolicy: open: anyone who finds the bot may talk to it",
		"fix: dmPolicy: pairing",
		`✗ channels.telegram.groups: ["*"]: anyone who adds the bot to a group may talk to it there`,
		`fix: list the group ids you mean instead of "*"`,
		`✗ channels.telegram: groups: ["*"] and dmPolicy: open lets anyone in, and guests may use exec, write`,
		"fix: take exec, write out of the allow lists under channels.telegram",
		"✗ tools.exec.sandbox: off: no limits or confinement",
		"fix: tools.exec.sandbox: landlock",
		"✗ tools.exec.approvals: off, while guests may use exec (channels.telegram.tools): their commands run without the owner being asked",
		"fix: tools.exec.approvals: owner",
		"✗ channels.telegram.webhookListen: 0.0.0.0:8443 is reachable from other machines",
		"fix: webhookListen: 127.0.0.1:8443",
		"✗ channels.telegram.webhookSecret: 5 characters: short enough to guess",
		"✗ channels.feishu.webhookListen: :9000 is reachable from other machines",
		"fix: webhookListen: 127.0.0.1:9000",
		"✗ channels.feishu.encryptKey: empty: events are checked by the verification token alone",
		"fix: encryptKey: ${FEISHU_ENCRYPT_KEY}",
		"✗ " + yaml + ": mode 0644: its group may read it, every other user may read it",
		"fix: chmod 600 " + yaml,
		"✗ " + data + ": mode 0755: its group may read it, every other user may read it",
		"fix: chmod 700 " + data,
		"✗ " + yaml + ":3: providers.openai.apiKey is written in the file",
		"fix: write apiKey: ${OPENAI_API_KEY} and set OPENAI_API_KEY in reef's environment",
		"✗ " + yaml + ":10: channels.telegram.botToken is written in the file",
		"fix: write botToken: ${TELEGRAM_BOT_TOKEN}",
		"13 problem(s) found.",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("audit output lacks %q:\n%s", want, res.stdout)
		}
	}
	// Secrets from the environment are neither reported nor printed.
	for _, not := range []string{"appSecret", "verificationToken is written", "feishu-app-secret-value", "sk-live-written-in-the-file", tgToken} {
		if strings.Contains(res.stdout+res.stderr, not) {
			t.Errorf("audit output has %q:\n%s", not, res.stdout)
		}
	}

	a, jres := auditJSON(t, e)
	if jres.code != 1 {
		t.Errorf("security audit -json: exit %d, want 1", jres.code)
	}
	if len(a.Problems) != 13 {
		t.Errorf("-json lists %d problems, want the 13 of the text:\n%s", len(a.Problems), jres.stdout)
	}
	var checks []string
	for _, p := range a.Problems {
		if p.Fix == "" || p.Where == "" || p.Problem == "" {
			t.Errorf("problem without where, problem or fix: %+v", p)
		}
		if !slices.Contains(checks, p.Check) {
			checks = append(checks, p.Check)
		}
	}
	slices.Sort(checks)
	want := []string{"clearSecret", "dmPolicy", "execApprovals", "execSandbox", "fileMode", "groups", "guestTools", "webhook"}
	if diff := cmp.Diff(want, checks); diff != "" {
		t.Errorf("checks with problems (-want +got):\n%s", diff)
	}
	if a.Config != yaml {
		t.Errorf("config = %q, want %q", a.Config, yaml)
	}
}

// TestSecurityAuditWebhookWithoutSecret: a webhook nobody can authenticate is reported with
// its fix, besides the configuration problem that keeps the gateway from starting.
func TestSecurityAuditWebhookWithoutSecret(t *testing.T) {
	srv := newFake(t)
	_, e := writeConfig(t, srv, telegramYAML("http://127.0.0.1:9", "mode: webhook", "webhookUrl: https://bot.example.com/tg")+
		"  feishu:\n    appId: cli_nosecret\n    appSecret: ${FEISHU_APP_SECRET}\n    mode: webhook\n")
	e["FEISHU_APP_SECRET"] = "feishu-app-secret-value"
	res := reef(t, e, "", "security", "audit")
	if res.code != 1 {
		t.Errorf("exit %d, want 1:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"✗ channels.telegram.webhookSecret: empty: anyone who finds the webhook URL can post forged updates",
		"fix: webhookSecret: ${TELEGRAM_WEBHOOK_SECRET}",
		"✗ channels.feishu: webhook without verificationToken or encryptKey: anyone can post forged events",
		"webhook mode needs webhookUrl (your public https URL) and webhookSecret", // the configuration problem
		"✓ webhooks: listening: telegram on 127.0.0.1:8443, feishu on 127.0.0.1:9000",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("audit output lacks %q:\n%s", want, res.stdout)
		}
	}
}

// TestSecurityAuditCleanSetups: the example configuration (with the environment it expects)
// and a fresh `reef init` home have no problem: the audit says so and exits 0.
func TestSecurityAuditCleanSetups(t *testing.T) {
	// Without Landlock, auto falls back to rlimits only, which the audit rightly reports.
	allowed := []string{}
	if exec.Probe(exec.SandboxAuto).Mode != exec.SandboxLandlock {
		allowed = append(allowed, "execSandbox")
	}
	srv := newFake(t)
	example, exampleEnv := writeConfig(t, srv, string(configs.Example))
	fresh := newHome(t)
	for _, tt := range []struct {
		name string
		home string
		e    env
		file string
	}{
		{"the example", example, exampleEnv, filepath.Join(example, "reef.yaml")},
		{"a fresh home", fresh, withFake(fresh, srv), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if res := reef(t, tt.e, "", "init"); res.code != 0 {
				t.Fatalf("init: %s", res.stderr)
			}
			res := reef(t, tt.e, "", "security", "audit")
			a, _ := auditJSON(t, tt.e)
			var unexpected []finding
			for _, p := range a.Problems {
				if !slices.Contains(allowed, p.Check) {
					unexpected = append(unexpected, p)
				}
			}
			if len(unexpected) > 0 {
				t.Fatalf("problems on a safe setup: %+v\n%s", unexpected, res.stdout)
			}
			if len(allowed) > 0 {
				t.Skipf("no Landlock on this kernel: the sandbox problem is expected; the rest was clean")
			}
			if res.code != 0 || !strings.Contains(res.stdout, "No problems found.") || strings.Contains(res.stdout, "✗") {
				t.Errorf("exit %d, want 0 and no problem:\n%s%s", res.code, res.stdout, res.stderr)
			}
			if a.Config != tt.file {
				t.Errorf("config = %q, want %q", a.Config, tt.file)
			}
			for _, want := range []string{"✓ exec sandbox: ", "✓ webhooks: none", "✓ files: ", "✓ secrets: "} {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("audit output lacks %q:\n%s", want, res.stdout)
				}
			}
		})
	}
}

// TestSecurityUsage: help on stdout with status 0, a wrong verb on stderr with status 2.
func TestSecurityUsage(t *testing.T) {
	e := env{"REEF_HOME": newHome(t)}
	for _, args := range [][]string{{"security", "-h"}, {"security", "audit", "--help"}, {"security", "help"}} {
		res := reef(t, e, "", args...)
		if res.code != 0 || !strings.Contains(res.stdout, "reef security audit [-config FILE] [-json]") ||
			!strings.Contains(res.stdout, "1 when problems are found") {
			t.Errorf("%v: exit %d:\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
	for _, args := range [][]string{{"security"}, {"security", "check"}, {"security", "audit", "extra"}} {
		res := reef(t, e, "", args...)
		if res.code != 2 || !strings.Contains(res.stderr, "reef security audit") || res.stdout != "" {
			t.Errorf("%v: exit %d, want 2 and the usage on stderr:\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
	if res := reef(t, e, "", "help"); !strings.Contains(res.stdout, "reef security audit") {
		t.Errorf("reef help does not list reef security audit:\n%s", res.stdout)
	}
}

// TestDoctorWarnsOnFileModes: `reef doctor` warns when others may read reef.yaml or the
// data directory, with the fix, and stays quiet about private ones.
func TestDoctorWarnsOnFileModes(t *testing.T) {
	srv := newFake(t)
	home, e := writeConfig(t, srv, "log:\n  level: info\n")
	if res := reef(t, e, "", "init"); res.code != 0 {
		t.Fatalf("init: %s", res.stderr)
	}
	res := reef(t, e, "", "doctor")
	if res.code != 0 || strings.Contains(res.stdout, "! security") {
		t.Fatalf("doctor on private files: exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	yaml, data := filepath.Join(home, "reef.yaml"), filepath.Join(home, "data")
	if err := os.Chmod(yaml, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(data, 0o705); err != nil {
		t.Fatal(err)
	}
	res = reef(t, e, "", "doctor")
	if strings.Contains(res.stdout, "chmod 600 "+yaml) { // only ${VAR} references: nothing to hide (the example config is in git)
		t.Errorf("doctor asks to hide a file without secrets:\n%s", res.stdout)
	}
	if err := os.WriteFile(yaml, []byte("log:\n  level: info\ngateway:\n  http:\n    token: a-literal-token-0123456789\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	res = reef(t, e, "", "doctor")
	for _, want := range []string{
		"! security: " + yaml + ": mode 0640: its group may read it; it holds secrets written in the file (gateway.http.token)",
		"fix: chmod 600 " + yaml,
		"! security: " + data + ": mode 0705: every other user may read it",
		"fix: chmod 700 " + data,
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, res.stdout)
		}
	}
	if res.code != 0 {
		t.Errorf("doctor: exit %d, want 0 (a warning):\n%s%s", res.code, res.stdout, res.stderr)
	}
}

func TestModeProblem(t *testing.T) {
	tests := []struct {
		mode fs.FileMode
		want string // "" = no problem
	}{
		{0o600, ""},
		{0o700 | fs.ModeDir, ""},
		{0o400, ""},
		{0o601, ""}, // others may execute a file, not read it
		{0o640, "mode 0640: its group may read it"},
		{0o604, "mode 0604: every other user may read it"},
		{0o602, "mode 0602: every other user may change it"},
		{0o666, "mode 0666: its group may read and change it, every other user may read and change it"},
		{0o711 | fs.ModeDir, "mode 0711: its group may read it, every other user may read it"}, // entering reads by name
		{0o730 | fs.ModeDir, "mode 0730: its group may read and change it"},
	}
	for _, tt := range tests {
		got := modeProblem(tt.mode)
		if got != tt.want {
			t.Errorf("modeProblem(%v) = %q, want %q", tt.mode, got, tt.want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8443": true, "localhost:9000": true, "[::1]:80": true, "127.1.2.3:1": true,
		":8443": false, "0.0.0.0:8443": false, "[::]:80": false, "192.168.1.5:80": false,
		"bot.example.com:443": false, "garbage": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestEnvName(t *testing.T) {
	for path, want := range map[string]string{
		"providers.openai.apiKey":           "OPENAI_API_KEY",
		"channels.telegram.botToken":        "TELEGRAM_BOT_TOKEN",
		"channels.feishu.verificationToken": "FEISHU_VERIFICATION_TOKEN",
		"providers.my-llm.apiKey":           "MY_LLM_API_KEY",
		"apiKey":                            "API_KEY",
	} {
		if got := envName(path); got != want {
			t.Errorf("envName(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestAuditAccessAndWebhooks checks the configuration checks on configurations built in
// memory: what is a problem and what is posture.
func TestAuditAccessAndWebhooks(t *testing.T) {
	tests := []struct {
		name     string
		channels configs.ChannelsConfig
		want     []string // where of each problem, in order
	}{
		{"nothing configured", configs.ChannelsConfig{}, nil},
		{"pairing and listed groups", configs.ChannelsConfig{Discord: &configs.DiscordConfig{DMPolicy: "pairing", Groups: []string{"1"}}}, nil},
		{"open DMs", configs.ChannelsConfig{Discord: &configs.DiscordConfig{DMPolicy: "open"}}, []string{"channels.discord.dmPolicy"}},
		{"every group", configs.ChannelsConfig{Discord: &configs.DiscordConfig{Groups: []string{"1", "*"}}}, []string{"channels.discord.groups"}},
		// "*" in allowFrom admits every stranger whatever the policy says (#39 item 7).
		{"pairing with a star", configs.ChannelsConfig{Telegram: &configs.TelegramConfig{DMPolicy: "pairing", AllowFrom: []string{"*", "500"}}}, []string{"channels.telegram.allowFrom"}},
		{"discord allowlist with a star", configs.ChannelsConfig{Discord: &configs.DiscordConfig{DMPolicy: "allowlist", AllowFrom: []string{"*"}}}, []string{"channels.discord.allowFrom"}},
		{"disabled DMs with a star", configs.ChannelsConfig{Discord: &configs.DiscordConfig{DMPolicy: "disabled", AllowFrom: []string{"*"}}}, nil},
		{"telegram polling ignores webhook keys", configs.ChannelsConfig{Telegram: &configs.TelegramConfig{Mode: "polling", WebhookListen: "0.0.0.0:1"}}, nil},
		{"telegram webhook done right", configs.ChannelsConfig{Telegram: &configs.TelegramConfig{Mode: "webhook", WebhookListen: "127.0.0.1:8443", WebhookSecret: strings.Repeat("s", 16)}}, nil},
		{"telegram webhook, public, no secret", configs.ChannelsConfig{Telegram: &configs.TelegramConfig{Mode: "webhook", WebhookListen: ":8443"}},
			[]string{"channels.telegram.webhookListen", "channels.telegram.webhookSecret"}},
		{"feishu webhook signed", configs.ChannelsConfig{Feishu: &configs.FeishuConfig{Mode: "webhook", WebhookListen: "localhost:9000", EncryptKey: "k"}}, nil},
		{"feishu webhook, token only", configs.ChannelsConfig{Feishu: &configs.FeishuConfig{Mode: "webhook", WebhookListen: "127.0.0.1:9000", VerificationToken: "t"}},
			[]string{"channels.feishu.encryptKey"}},
		{"feishu websocket needs nothing", configs.ChannelsConfig{Feishu: &configs.FeishuConfig{Mode: "websocket"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &configs.Config{Channels: tt.channels}
			a := &audit{}
			auditAccess(a, cfg)
			auditWebhooks(a, cfg)
			var got []string
			for _, p := range a.Problems {
				got = append(got, p.Where)
				if p.Fix == "" {
					t.Errorf("%s: no fix", p.Where)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(a.Posture) == 0 {
				t.Error("no posture reported")
			}
		})
	}
}

// TestAuditExposure: a web listener off loopback, running as root and dmScope main are
// reported; the audit no longer says reef listens on no network address (#39 item 7).
func TestAuditExposure(t *testing.T) {
	defer func(f func() int) { euid = f }(euid)
	for _, tt := range []struct {
		listen string
		root   bool
		scope  string
		want   []string
		fact   string
	}{
		{"127.0.0.1:18789", false, "", nil, "this machine only"},
		{"off", false, "", nil, "no web listener"},
		{"0.0.0.0:18789", false, "", []string{"gateway.http.listen"}, ""},
		{"192.168.1.5:80", true, "", []string{"gateway.http.listen", "reef's user"}, ""},
		{"127.0.0.1:18789", false, "main", nil, "only the owner's direct chats share the main session"},
	} {
		euid = func() int { return map[bool]int{true: 0, false: 1000}[tt.root] }
		cfg := &configs.Config{Gateway: configs.GatewayConfig{HTTP: configs.GatewayHTTPConfig{Listen: tt.listen}},
			Session: configs.SessionConfig{DMScope: tt.scope}}
		a := &audit{}
		auditExposure(a, cfg)
		auditWebhooks(a, cfg)
		var got []string
		for _, p := range a.Problems {
			got = append(got, p.Where)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s root %v: problems (-want +got):\n%s", tt.listen, tt.root, diff)
		}
		var facts []string
		for _, f := range a.Posture {
			facts = append(facts, f.Detail)
			if strings.Contains(f.Detail, "no network address") {
				t.Errorf("%s: the audit still says %q", tt.listen, f.Detail)
			}
		}
		if tt.fact != "" && !strings.Contains(strings.Join(facts, "\n"), tt.fact) {
			t.Errorf("%s %s: posture %q lacks %q", tt.listen, tt.scope, facts, tt.fact)
		}
	}
}

// TestDoctorIsNotAllGoodWhenDoorsAreOpen: open DMs with every group, the exec sandbox off
// and web requests opened to everything are warned of, and reef doctor does not end with
// "All good" (#39 item 7).
func TestDoctorIsNotAllGoodWhenDoorsAreOpen(t *testing.T) {
	srv := newFake(t)
	_, e := writeConfig(t, srv, `tools:
  exec:
    sandbox: "off"
  web:
    allowPrivate: ["0.0.0.0/0"]
channels:
  telegram:
    botToken: "`+tgToken+`"
    dmPolicy: open
    allowFrom: ["*"]
    groups: ["*"]
`)
	res := reef(t, e, "", "doctor")
	for _, want := range []string{"channels.telegram.dmPolicy", "channels.telegram.groups", "tools.exec.sandbox", "tools.web.allowPrivate"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("reef doctor does not warn of %s:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "All good") {
		t.Errorf("reef doctor says All good:\n%s", res.stdout)
	}
}
