package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/providers/fake"
)

// TestPipedChatFailsWhenARunFails: a script can tell that no answer came: reef chat exits
// non-zero and says why on stderr; the reply on stdout says it too.
func TestPipedChatFailsWhenARunFails(t *testing.T) {
	home := newHome(t)
	e := env{"REEF_HOME": home, "HOME": home, "OPENAI_API_KEY": canary, "REEF_MODEL": "openai/test-model",
		"OPENAI_BASE_URL": "http://" + freeAddr(t) + "/v1"} // nothing listens there
	res := reef(t, e, "hi\n", "chat")
	if res.code == 0 {
		t.Errorf("reef chat against an unreachable model exited 0; stdout %q, stderr %q", res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "reef: the run failed:") || !strings.Contains(res.stderr, "connection refused") {
		t.Errorf("stderr = %q, want the reason", res.stderr)
	}
	// The user of the terminal is the operator: not told to ask one.
	if !strings.Contains(res.stdout, "run `reef doctor`") || strings.Contains(res.stdout, "operator") {
		t.Errorf("stdout = %q, want to be told to run reef doctor", res.stdout)
	}
	if strings.Contains(res.stderr, canary) || strings.Contains(res.stdout, canary) {
		t.Error("the API key was printed")
	}

	// The same conversation with a model that answers: exit 0 again.
	srv := newFake(t, fake.Reply{Text: "hello"})
	if res := reef(t, withFake(home, srv), "hi\n", "chat"); res.code != 0 || res.stdout != "hello\n" {
		t.Errorf("reef chat = %d, stdout %q, stderr %q; want 0 and the reply", res.code, res.stdout, res.stderr)
	}
}

// TestChatUnknownSlashCommand: in the terminal "/stauts" is answered as not a command
// instead of going to the model; a skill's name and a path still go to the model.
func TestChatUnknownSlashCommand(t *testing.T) {
	home := newHome(t)
	skill := filepath.Join(home, "workspace", "skills", "pdf", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: pdf\ndescription: read PDF files\n---\nUse pdftotext.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newFake(t, fake.Reply{Text: "skill answer"}, fake.Reply{Text: "path answer"})
	res := reef(t, withFake(home, srv), "/stauts\n/pdf report.pdf\n/tmp/x is full\n", "chat")
	want := "/stauts is not a command, so it was not sent to the model. /help lists the commands.\nskill answer\npath answer\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("reef chat = %d, stdout %q, want %q; stderr %q", res.code, res.stdout, want, res.stderr)
	}
	if got := len(srv.Script().Requests()); got != 2 {
		t.Errorf("%d model requests, want 2 (the skill and the path)", got)
	}
}

// TestFakeLLMTakesAFreePortWhenTheDefaultIsBusy: with 127.0.0.1:8089 taken, reef fake-llm
// serves on another port and prints the exact line to paste, which works.
func TestFakeLLMTakesAFreePortWhenTheDefaultIsBusy(t *testing.T) {
	if ln, err := net.Listen("tcp", defaultFakeAddr); err == nil { // else something else holds it
		defer ln.Close()
	}
	for _, args := range [][]string{{"fake-llm"}, {"fake-llm", "-addr", ":0"}} {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		cmd := command(ctx, env{}, args...)
		stdout := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = stdout, stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var line string
		if !eventually(15*time.Second, func() bool {
			for _, l := range strings.Split(stdout.String(), "\n") {
				if strings.Contains(l, " reef chat") {
					line = strings.TrimSpace(l)
				}
			}
			return line != ""
		}) {
			t.Fatalf("reef %v printed no line to paste: %q", args, stdout)
		}
		base, ok := strings.CutPrefix(strings.Fields(line)[0], "OPENAI_BASE_URL=")
		if !ok || strings.Contains(base, ":8089/") || line != "OPENAI_BASE_URL="+base+" REEF_MODEL=openai/fake reef chat" {
			t.Errorf("reef %v: line to paste %q, want another port than 8089", args, line)
		}
		res := reef(t, env{"REEF_HOME": newHome(t), "HOME": t.TempDir(), "OPENAI_BASE_URL": base, "REEF_MODEL": "openai/fake"}, "hello\n", "chat")
		if res.code != 0 || !strings.Contains(res.stdout, "Hello! I am reef's fake model") {
			t.Errorf("the pasted line: reef chat = %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
		}
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		cancel()
	}
}

// TestNoChannelIsExplained: with a config file that names no channel, reef doctor says so
// and how to add one (not a failure: reef chat works), and reef gateway says so on stderr
// and where its log goes, also when it logs to a file.
func TestNoChannelIsExplained(t *testing.T) {
	srv := newFake(t)
	home, e := writeConfig(t, srv, "log:\n  file: ${REEF_HOME}/gateway.log\n")
	reef(t, e, "", "init")
	res := reef(t, e, "", "doctor")
	if res.code != 0 {
		t.Errorf("doctor: exit %d, want 0:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"! channels: no chat platform configured: `reef chat` works, and `reef gateway` is reached only through its web UI (WebChat, the API) on http://127.0.0.1:0/",
		"fix: add a channel under `channels:` in " + filepath.Join(home, "reef.yaml"),
		"botToken: ${TELEGRAM_BOT_TOKEN}",
		"All good. `reef chat` is ready; `reef gateway` has no chat platform to serve yet",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, res.stdout)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := command(ctx, e, "gateway")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(os.Interrupt)
	want := "reef gateway: logging to " + filepath.Join(home, "gateway.log") + " (log.file)\n" +
		"reef gateway: no chat platform configured: only WebChat and the API on http://127.0.0.1:"
	if !eventually(15*time.Second, func() bool { return strings.Contains(stderr.String(), want) }) {
		t.Errorf("gateway stderr = %q, want %q", stderr, want)
	}

	// With a channel, doctor lists it instead.
	_, e = writeConfig(t, srv, "channels:\n  terminal:\n    enabled: true\n")
	reef(t, e, "", "init")
	if res := reef(t, e, "", "doctor"); !strings.Contains(res.stdout, "✓ channels: terminal") || !strings.Contains(res.stdout, "\nAll good.\n") {
		t.Errorf("doctor with a channel:\n%s", res.stdout)
	}
}

// TestAdminCommandsPrintTextUnlessJSON: every command that lists or changes something prints
// text; -json is the only way to get JSON, anywhere on the command line.
func TestAdminCommandsPrintTextUnlessJSON(t *testing.T) {
	e := withFake(newHome(t), newFake(t))
	add := reef(t, e, "", "cron", "add", "-name", "logs", "-every", "1h", "-text", "-json")
	id := regexp.MustCompile(`added ([0-9a-f]+)`).FindStringSubmatch(add.stdout)
	if add.code != 0 || id == nil {
		t.Fatalf("cron add with the text -json = %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	var jobs []struct{ ID, Name string }
	list := reef(t, e, "", "cron", "list", "-json")
	if err := json.Unmarshal([]byte(list.stdout), &jobs); err != nil || len(jobs) != 1 || jobs[0].ID != id[1] {
		t.Errorf("cron list -json = %q (%v), want the job as JSON", list.stdout, err)
	}
	if res := reef(t, e, "", "cron", "rm", id[1]); res.code != 0 || res.stdout != "removed "+id[1]+"\n" {
		t.Errorf("cron rm = %d, stdout %q, want text; stderr %q", res.code, res.stdout, res.stderr)
	}
	add = reef(t, e, "", "cron", "add", "-name", "x", "-every", "1h", "-text", "x")
	id = regexp.MustCompile(`added ([0-9a-f]+)`).FindStringSubmatch(add.stdout)
	var removed struct{ Removed string }
	if res := reef(t, e, "", "cron", "-json", "rm", id[1]); json.Unmarshal([]byte(res.stdout), &removed) != nil || removed.Removed != id[1] {
		t.Errorf("cron -json rm = %q, want JSON naming the job", res.stdout)
	}

	for _, args := range [][]string{{"status"}, {"pairing", "list"}} {
		text := reef(t, e, "", args...)
		if text.code != 0 || strings.HasPrefix(strings.TrimSpace(text.stdout), "{") || strings.HasPrefix(strings.TrimSpace(text.stdout), "[") {
			t.Errorf("%v = %d, stdout %q, want text", args, text.code, text.stdout)
		}
		asJSON := reef(t, e, "", append(args, "-json")...)
		if asJSON.code != 0 || !json.Valid([]byte(asJSON.stdout)) {
			t.Errorf("%v -json = %d, stdout %q, stderr %q; want JSON", args, asJSON.code, asJSON.stdout, asJSON.stderr)
		}
	}
}

// TestUnknownModelAndProvider: a model the provider does not offer is named as such, with
// what it offers and how to switch, in reef chat and in reef doctor; a misspelt provider
// gets a did-you-mean.
func TestUnknownModelAndProvider(t *testing.T) {
	srv := newFake(t, fake.Reply{Status: http.StatusNotFound})
	home := newHome(t)
	e := withFake(home, srv)
	e["REEF_MODEL"] = "openai/gpt-5x"
	res := reef(t, e, "hi\n", "chat")
	want := "The model openai/gpt-5x was not found: openai does not offer it. It offers: test-model. " +
		"Switch with /model openai/<name>, or set the model in the configuration (the agent's `model` in reef.yaml, or REEF_MODEL) and check it with `reef doctor`.\n"
	if res.code == 0 || res.stdout != want {
		t.Errorf("reef chat = %d, stdout %q, want %q", res.code, res.stdout, want)
	}
	if !strings.Contains(res.stderr, `reef: the run failed: providers: failover (tried openai/gpt-5x): openai: model "gpt-5x" not found`) {
		t.Errorf("stderr = %q, want the reason", res.stderr)
	}

	reef(t, e, "", "init")
	e["REEF_MODEL"] = "openai/test-modle"
	res = reef(t, e, "", "doctor")
	for _, want := range []string{
		"✗ model openai/test-modle: not found: openai does not offer it",
		"fix: did you mean openai/test-model? use one it offers: test-model",
		"set it as the agent's model in reef.yaml (or REEF_MODEL); in a chat, /model switches",
	} {
		if res.code != 1 || !strings.Contains(res.stdout, want) {
			t.Errorf("doctor = %d, output lacks %q:\n%s", res.code, want, res.stdout)
		}
	}
	e["REEF_MODEL"] = "openai/test-model"
	if res := reef(t, e, "", "doctor"); !strings.Contains(res.stdout, "✓ model openai/test-model: offered") {
		t.Errorf("doctor with a good model:\n%s", res.stdout)
	}

	e["REEF_MODEL"] = "opnai/fake-model"
	want = `agents[0].model: "opnai/fake-model" names provider "opnai", which is not configured (did you mean "openai"? then write "openai/fake-model")`
	if res := reef(t, e, "", "doctor"); res.code != 1 || !strings.Contains(res.stdout, want) {
		t.Errorf("doctor = %d, output lacks %q:\n%s", res.code, want, res.stdout)
	}
	if res := reef(t, e, "hi\n", "chat"); res.code == 0 || !strings.Contains(res.stderr, want) {
		t.Errorf("reef chat = %d, stderr lacks %q:\n%s", res.code, want, res.stderr)
	}
}

// TestStatusShowsOwners: reef status says who the owner is on each channel, and that
// allowFrom "*" makes nobody the owner.
func TestStatusShowsOwners(t *testing.T) {
	_, e := writeConfig(t, newFake(t), "channels:\n"+
		"  telegram:\n    botToken: \"123456:"+strings.Repeat("A", 35)+"\"\n    dmPolicy: open\n    allowFrom: [\"*\"]\n"+
		"  discord:\n    token: abcdefghijkl\n    allowFrom: [\"1234\", \"*\"]\n")
	res := reef(t, e, "", "status")
	for _, want := range []string{
		"owners (may use owner-only tools such as cron and exec): the terminal (reef chat), and whoever holds the gateway token (WebChat, the API)\n",
		"  discord   1234 (in direct messages)\n",
		`  telegram  nobody: allowFrom "*" lets everyone talk but makes nobody the owner; add your id to channels.telegram.allowFrom`,
	} {
		if res.code != 0 || !strings.Contains(res.stdout, want) {
			t.Errorf("status = %d, lacks %q:\n%s%s", res.code, want, res.stdout, res.stderr)
		}
	}
}
