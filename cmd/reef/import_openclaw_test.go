package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers/fake"
)

// openclawCanaries are the secrets in the sample installation's openclaw.json.
var openclawCanaries = []string{"AAcanaryTelegramTokenValue", "sk-local-canary-5678", "brave-canary-value-1234", "gateway-canary-token-999"}

// sampleOpenClaw copies internal/openclaw/testdata/openclaw (two agents, Telegram and
// Feishu, cron jobs, skills, JSON5) to a temporary directory, with every model on the
// custom provider "local-llm" served by srv, so that the imported reef talks to the fake.
func sampleOpenClaw(t *testing.T, llmURL string) string {
	t.Helper()
	src := filepath.Join("..", "..", "internal", "openclaw", "testdata", "openclaw")
	dst := filepath.Join(t.TempDir(), ".openclaw")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "openclaw.json" {
			s := strings.NewReplacer(
				`{ primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-4.1-mini"] }`, `"local-llm/test-model"`,
				`"openrouter/qwen/qwen-2.5-72b-instruct"`, `"local-llm/test-model"`,
				"http://127.0.0.1:4000/v1", llmURL,
				`id: "llama-3.1-8b"`, `id: "test-model"`).Replace(string(b))
			if s == string(b) {
				t.Fatal("the sample openclaw.json changed: update sampleOpenClaw")
			}
			b = []byte(s)
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestImportOpenClaw imports a sample OpenClaw installation through the real binary: a dry
// run writes nothing, the import writes a reef.yaml that reef doctor accepts, the persona
// files and skills, and the cron jobs; reef then runs on it with the persona in its prompt.
// No secret of openclaw.json is copied anywhere, the OpenClaw directory is left as it was,
// and a second import does not overwrite what the user changed without --force.
func TestImportOpenClaw(t *testing.T) {
	srv := newFake(t, fake.Reply{Text: "Ahoy, I am Clawd."})
	from := sampleOpenClaw(t, srv.URL())
	before := dirHash(t, from)
	home := newHome(t)
	e := env{"REEF_HOME": home, "HOME": filepath.Dir(home)}

	dry := reef(t, e, "", "import", "openclaw", from, "--dry-run")
	if dry.code != 0 || !strings.Contains(dry.stdout, "Dry run: nothing written") {
		t.Fatalf("dry run = %d\n%s%s", dry.code, dry.stdout, dry.stderr)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("the dry run created %s (%v)", home, err)
	}

	res := reef(t, e, "", "import", "openclaw", "--from", from)
	if res.code != 0 {
		t.Fatalf("import = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"+ agent main (Clawd): model local-llm/test-model", "+ cron job \"Morning brief\" for main",
		"- channels.whatsapp: reef has no whatsapp channel", "LOCAL_LLM_API_KEY", "TELEGRAM_BOT_TOKEN",
		"Added 2 cron job(s)"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("import output lacks %q:\n%s", want, res.stdout)
		}
	}
	run := env{"REEF_HOME": home, "HOME": filepath.Dir(home), "LOCAL_LLM_API_KEY": canary,
		"TELEGRAM_BOT_TOKEN": "123456789:" + strings.Repeat("A", 35), "FEISHU_MAIN_SECRET": "feishu-secret"}
	doc := reef(t, run, "", "doctor")
	if doc.code != 0 || !strings.Contains(doc.stdout, "✓ configuration") || !strings.Contains(doc.stdout, "✓ channels: feishu, telegram") {
		t.Fatalf("doctor on the imported config = %d\n%s%s", doc.code, doc.stdout, doc.stderr)
	}
	cron := reef(t, run, "", "cron", "list")
	if !strings.Contains(cron.stdout, "Morning brief") || !strings.Contains(cron.stdout, "Stand-up reminder") {
		t.Errorf("cron list after the import = %d\n%s%s", cron.code, cron.stdout, cron.stderr)
	}
	chat := reef(t, run, "hello\n", "chat")
	if chat.code != 0 || !strings.Contains(chat.stdout, "Ahoy, I am Clawd.") {
		t.Fatalf("chat on the imported config = %d\n%s%s", chat.code, chat.stdout, chat.stderr)
	}
	reqs := srv.Script().Requests()
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests, want 1", len(reqs))
	}
	for _, want := range []string{"You are Clawd", "friendly lobster", "Ada likes tea", "## Persona\nAlways answer in the user's language."} {
		if !strings.Contains(reqs[0].System, want) {
			t.Errorf("the imported agent's prompt lacks %q", want)
		}
	}

	// The user edits SOUL.md; importing again refuses to overwrite it, --force replaces it.
	soul := filepath.Join(home, "workspace", "SOUL.md")
	os.WriteFile(soul, []byte("my own soul\n"), 0o644)
	again := reef(t, e, "", "import", "openclaw", "--from", from)
	if again.code == 0 || !strings.Contains(again.stderr, soul) || !strings.Contains(again.stderr, "--force") {
		t.Errorf("import over a changed file = %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	if b, _ := os.ReadFile(soul); string(b) != "my own soul\n" {
		t.Error("a refused import changed SOUL.md")
	}
	forced := reef(t, e, "", "import", "openclaw", "--from", from, "--force")
	if b, _ := os.ReadFile(soul); forced.code != 0 || !strings.Contains(string(b), "friendly lobster") {
		t.Errorf("--force import = %d, SOUL.md %q\n%s%s", forced.code, b, forced.stdout, forced.stderr)
	}
	if !strings.Contains(forced.stdout, "is there already") {
		t.Errorf("a second import added the cron jobs again:\n%s", forced.stdout)
	}

	if after := dirHash(t, from); after != before {
		t.Error("the import changed the OpenClaw directory")
	}
	written := dry.stdout + dry.stderr + res.stdout + res.stderr + again.stdout + again.stderr + forced.stdout
	_ = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			written += string(b)
		}
		return nil
	})
	for _, c := range openclawCanaries {
		if strings.Contains(written, c) {
			t.Errorf("the secret %q from openclaw.json was copied into reef's output or files", c)
		}
	}
}

// dirHash hashes the names, modes and contents of every file below dir.
func dirHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(p + info.Mode().String() + info.ModTime().String()))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
