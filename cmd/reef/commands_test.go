package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
)

func TestGatewayStopsCleanlyOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			srv := newFake(t)
			home := newHome(t)
			g := startGateway(t, withFake(home, srv))
			if code := g.stop(t, sig); code != 0 {
				t.Fatalf("exit code %d after %v, want 0; stderr:\n%s", code, sig, g.stderr)
			}
			logs := g.stderr.String()
			for _, want := range []string{"no chat platform configured", "shutting down", `"message":"stopped"`} {
				if !strings.Contains(logs, want) {
					t.Errorf("logs lack %q:\n%s", want, logs)
				}
			}
			if out := g.stdout.String(); out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			checkDatabase(t, home)
			noCanary(t, home, srv, logs)
		})
	}
}

// checkDatabase opens the database under home and runs bbolt's consistency check.
func checkDatabase(t *testing.T, home string) {
	t.Helper()
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatalf("open the database after shutdown: %v", err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Errorf("database check: %v", err)
	}
}

func TestSecondInstanceExitsAtOnce(t *testing.T) {
	srv := newFake(t)
	home := newHome(t)
	e := withFake(home, srv)
	g := startGateway(t, e)
	var outputs []string
	for _, args := range [][]string{{"gateway"}, {"chat"}} {
		start := time.Now()
		res := reef(t, e, "hello\n", args...)
		elapsed := time.Since(start)
		if res.code == 0 {
			t.Errorf("second reef %s exited 0; stderr:\n%s", args[0], res.stderr)
		}
		// It gives up after bbolt's 100 ms lock timeout; starting a -race binary on a loaded
		// 2-core machine takes seconds of its own (2.8 s seen at load 25), a hang far more.
		if elapsed > 6*time.Second {
			t.Errorf("second reef %s took %v to give up, want well under 6s", args[0], elapsed)
		}
		if !strings.Contains(res.stderr, "another reef is already running") || !strings.Contains(res.stderr, filepath.Join(home, "data")) {
			t.Errorf("second reef %s stderr does not say another reef runs on %s:\n%s", args[0], home, res.stderr)
		}
		if strings.Contains(res.stderr, "no channels configured") {
			t.Errorf("second reef %s warns about channels although it never started:\n%s", args[0], res.stderr)
		}
		outputs = append(outputs, res.stdout, res.stderr)
	}
	if n := len(srv.Script().Requests()); n != 0 {
		t.Errorf("the second instances made %d model requests, want 0", n)
	}
	// doctor only reads: it may run beside the gateway.
	doc := reef(t, e, "", "doctor")
	if doc.code != 0 || !strings.Contains(doc.stdout, "✓ database: in use by a running reef") {
		t.Errorf("doctor beside a running gateway: exit %d:\n%s%s", doc.code, doc.stdout, doc.stderr)
	}
	outputs = append(outputs, doc.stdout, doc.stderr)
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("first gateway exit code %d, want 0; stderr:\n%s", code, g.stderr)
	}
	if !strings.Contains(g.stderr.String(), `"message":"stopped"`) {
		t.Errorf("first gateway did not log stopped:\n%s", g.stderr)
	}
	checkDatabase(t, home)
	noCanary(t, home, srv, append(outputs, g.stderr.String())...)
}

func TestInitCreatesHomeAndIsIdempotent(t *testing.T) {
	home := newHome(t)
	e := env{"REEF_HOME": home}
	first := reef(t, e, "", "init")
	if first.code != 0 {
		t.Fatalf("init: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	example := filepath.Join(home, "reef.example.yaml")
	if got, err := os.ReadFile(example); err != nil || string(got) != string(configs.Example) {
		t.Errorf("reef.example.yaml: %v; want the embedded example (%d bytes, got %d)", err, len(configs.Example), len(got))
	}
	for _, f := range []string{"AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md"} {
		path := filepath.Join(home, "workspace", f)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("workspace file: %v", err)
		}
		if !strings.Contains(first.stdout, "created "+path) {
			t.Errorf("init output does not list %s:\n%s", path, first.stdout)
		}
	}
	if fi, err := os.Stat(filepath.Join(home, "data")); err != nil || !fi.IsDir() {
		t.Errorf("data directory: %v", err)
	}

	// A second run changes nothing, not even a file the user edited.
	agents := filepath.Join(home, "workspace", "AGENTS.md")
	if err := os.WriteFile(agents, []byte("my own rules\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	second := reef(t, e, "", "init")
	if second.code != 0 {
		t.Fatalf("second init: exit %d; stderr:\n%s", second.code, second.stderr)
	}
	if strings.Contains(second.stdout, "created") || !strings.Contains(second.stdout, "already set up") {
		t.Errorf("second init output:\n%s\nwant no file created and a note that the workspace is set up", second.stdout)
	}
	if got, _ := os.ReadFile(agents); string(got) != "my own rules\n" {
		t.Errorf("second init overwrote AGENTS.md: %q", got)
	}
	if res := reef(t, e, "", "init", "extra"); res.code != 2 || !strings.Contains(res.stderr, "usage: reef init") {
		t.Errorf("init extra: exit %d, stderr %q; want 2 and the usage", res.code, res.stderr)
	}
}

func TestDoctorHealthy(t *testing.T) {
	srv := newFake(t)
	home := newHome(t)
	e := withFake(home, srv)
	if res := reef(t, e, "", "init"); res.code != 0 {
		t.Fatalf("init: %s", res.stderr)
	}
	res := reef(t, e, "", "doctor")
	if res.code != 0 {
		t.Fatalf("doctor: exit %d, want 0:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"✓ configuration: ",
		"✓ database: " + filepath.Join(home, "data", "reef.db"),
		"✓ workspace main: " + filepath.Join(home, "workspace"),
		"✓ provider openai: reachable at " + srv.URL(),
		"✓ exec sandbox: ",
		"! web search: off", "set BRAVE_API_KEY or TAVILY_API_KEY",
		"All good.",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "✗") {
		t.Errorf("doctor reports a problem:\n%s", res.stdout)
	}
	noCanary(t, home, srv, res.stdout, res.stderr)
}

func TestDoctorNamesTheSearchProvider(t *testing.T) {
	srv := newFake(t)
	home := newHome(t)
	e := withFake(home, srv)
	e["SEARXNG_URL"] = "http://127.0.0.1:8888"
	reef(t, e, "", "init")
	res := reef(t, e, "", "doctor")
	if !strings.Contains(res.stdout, "✓ web search: searxng") || strings.Contains(res.stdout, "web search: off") {
		t.Errorf("doctor output:\n%s", res.stdout)
	}
}

func TestDoctorReportsARejectedKey(t *testing.T) {
	var sawKey atomic.Bool
	rejecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if key == canary {
			sawKey.Store(true)
		}
		// Like OpenAI, echo the key in the error: the client must not pass it on.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	defer rejecting.Close()
	home := newHome(t)
	e := env{"REEF_HOME": home, "OPENAI_BASE_URL": rejecting.URL + "/v1", "OPENAI_API_KEY": canary, "REEF_MODEL": "openai/test-model"}
	reef(t, e, "", "init")
	res := reef(t, e, "", "doctor")
	if res.code != 1 {
		t.Errorf("doctor exit %d, want 1:\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !sawKey.Load() {
		t.Error("doctor never sent the key to the provider")
	}
	for _, want := range []string{"✗ provider openai: the API key was rejected", "OPENAI_API_KEY", "1 problem(s) found."} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, res.stdout)
		}
	}
	if !strings.Contains(res.stdout, "✓ database") {
		t.Errorf("doctor stopped checking at the provider:\n%s", res.stdout)
	}
	noCanary(t, home, nil, res.stdout, res.stderr)
}

func TestDoctorWithoutProvider(t *testing.T) {
	home := newHome(t)
	res := reef(t, env{"REEF_HOME": home}, "", "doctor")
	if res.code != 1 {
		t.Errorf("doctor exit %d, want 1", res.code)
	}
	if !strings.Contains(res.stdout, "✗ configuration: no LLM provider") || !strings.Contains(res.stdout, "OPENAI_API_KEY") {
		t.Errorf("doctor output does not explain the missing provider:\n%s", res.stdout)
	}
}

func TestVersionHelpAndUnknownCommands(t *testing.T) {
	e := env{"REEF_HOME": newHome(t)}
	tests := []struct {
		args       []string
		code       int
		stdout     *regexp.Regexp
		stderrPart string
	}{
		{[]string{"version"}, 0, regexp.MustCompile(`^reef dev \(go[0-9.]+\S*, \w+/\w+\)\n$`), ""},
		{[]string{"--version"}, 0, regexp.MustCompile(`^reef dev `), ""},
		{[]string{"help"}, 0, regexp.MustCompile(`(?s)^reef — .*reef chat .*reef gateway .*reef init .*reef doctor .*reef version`), ""},
		{nil, 2, regexp.MustCompile(`^$`), "Usage:"},
		{[]string{"chatt"}, 2, regexp.MustCompile(`^$`), `unknown command "chatt"`},
		{[]string{"chat", "-bogus"}, 2, regexp.MustCompile(`^$`), "flag provided but not defined: -bogus"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			res := reef(t, e, "", tt.args...)
			if res.code != tt.code {
				t.Errorf("exit code %d, want %d", res.code, tt.code)
			}
			if !tt.stdout.MatchString(res.stdout) {
				t.Errorf("stdout = %q, want it to match %s", res.stdout, tt.stdout)
			}
			if !strings.Contains(res.stderr, tt.stderrPart) {
				t.Errorf("stderr = %q, want it to contain %q", res.stderr, tt.stderrPart)
			}
		})
	}
}

// TestEveryCommandAnswersHelp: -h and --help on every command and subcommand print its usage
// on stdout and exit 0, with nothing on stderr and nothing done; a bad flag still exits 2.
func TestEveryCommandAnswersHelp(t *testing.T) {
	home := newHome(t)
	e := env{"REEF_HOME": home}
	tests := []struct {
		args []string
		want string // in stdout
	}{
		{[]string{"chat"}, "reef chat"},
		{[]string{"gateway"}, "-pprof"},
		{[]string{"init"}, "reef init"},
		{[]string{"doctor"}, "reef doctor"},
		{[]string{"status"}, "reef status"},
		{[]string{"events"}, "-session"},
		{[]string{"sessions"}, "reef sessions list"},
		{[]string{"sessions", "list"}, "reef sessions list"},
		{[]string{"sessions", "show", "k"}, "reef sessions show"},
		{[]string{"sessions", "export"}, "-format"},
		{[]string{"pairing"}, "reef pairing"},
		{[]string{"pairing", "list"}, "reef pairing"},
		{[]string{"pairing", "approve", "telegram"}, "reef pairing"},
		{[]string{"cron"}, "reef cron add"},
		{[]string{"cron", "list"}, "reef cron add"},
		{[]string{"cron", "add", "-name", "x"}, "reef cron add"},
		{[]string{"cron", "rm"}, "reef cron add"},
		{[]string{"fake-llm"}, "-addr"},
		{[]string{"security"}, "reef security audit"},
		{[]string{"security", "audit"}, "reef security audit"},
		{[]string{"skills"}, "reef skills list"},
		{[]string{"skills", "list"}, "reef skills list"},
		{[]string{"skills", "info"}, "reef skills info"},
		{[]string{"backup"}, "reef backup"},
		{[]string{"restore"}, "reef restore"},
		{[]string{"service"}, "reef service install"},
		{[]string{"service", "install"}, "--memory-max"},
		{[]string{"service", "status"}, "reef service status"},
	}
	for _, tt := range tests {
		for _, h := range []string{"-h", "--help"} {
			args := append(slices.Clone(tt.args), h)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				res := reef(t, e, "", args...)
				if res.code != 0 || res.stderr != "" || !strings.Contains(res.stdout, tt.want) {
					t.Errorf("exit %d, stdout %q, stderr %q; want 0, usage with %q, nothing", res.code, res.stdout, res.stderr, tt.want)
				}
			})
		}
	}
	if _, err := os.Stat(home); err == nil {
		t.Errorf("asking for help created REEF_HOME %s", home)
	}
	res := reef(t, e, "", "sessions", "list", "-bogus")
	if res.code != 2 || !strings.Contains(res.stderr, "-bogus") || !strings.Contains(res.stderr, "reef sessions list") {
		t.Errorf("a bad flag: exit %d, stderr %q; want 2, the problem and the usage", res.code, res.stderr)
	}
}

func TestConfigProblemsAreShownBesideTheMissingProvider(t *testing.T) {
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte("agents:\n  - id: main\n    modle: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env{"REEF_HOME": home}
	chat := reef(t, e, "hello\n", "chat")
	doctor := reef(t, e, "", "doctor")
	for _, tc := range []struct {
		name string
		res  result
		out  string
	}{{"chat", chat, chat.stderr}, {"doctor", doctor, doctor.stdout}} {
		if tc.res.code == 0 {
			t.Errorf("%s exited 0", tc.name)
		}
		for _, want := range []string{"OPENAI_API_KEY", `unknown key "modle"`, `did you mean "model"`} {
			if !strings.Contains(tc.out, want) {
				t.Errorf("%s output lacks %q:\n%s", tc.name, want, tc.out)
			}
		}
	}
	if !strings.Contains(doctor.stdout, "2 problem(s) found.") {
		t.Errorf("doctor does not count both problems:\n%s", doctor.stdout)
	}
}

func TestGatewayWithTheTerminalChannel(t *testing.T) {
	srv := newFake(t, fake.Reply{Text: "hello from the gateway"})
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte("channels:\n  terminal:\n    enabled: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, withFake(home, srv), "hi there\n")
	g.waitStdout(t, "hello from the gateway\n")
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit code %d, want 0; stderr:\n%s", code, g.stderr)
	}
	if got := g.stdout.String(); got != "hello from the gateway\n" {
		t.Errorf("stdout = %q, want only the reply", got)
	}
	// three channels: the terminal, the web UI's WebChat and the OpenAI-compatible API
	if logs := g.stderr.String(); strings.Contains(logs, "no channels configured") || !strings.Contains(logs, `"channels":3`) {
		t.Errorf("logs do not show the terminal channel running:\n%s", logs)
	}
	if reqs := srv.Script().Requests(); len(reqs) != 1 || !strings.Contains(lastUser(reqs[0]), "hi there") {
		t.Errorf("model requests %+v, want one asking %q", reqs, "hi there")
	}
	checkDatabase(t, home)
	noCanary(t, home, srv, g.stdout.String(), g.stderr.String())
}

func TestInitSetsUpTheWorkspacesOfTheConfigFile(t *testing.T) {
	home := newHome(t)
	notes := filepath.Join(filepath.Dir(home), "notes")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "agents:\n  - id: main\n    workspace: " + notes + "\n"
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	res := reef(t, env{"REEF_HOME": home}, "", "init")
	if res.code != 0 {
		t.Fatalf("init: exit %d; stderr:\n%s", res.code, res.stderr)
	}
	if _, err := os.Stat(filepath.Join(notes, "AGENTS.md")); err != nil {
		t.Errorf("the configured workspace was not set up: %v\n%s", err, res.stdout)
	}
	if _, err := os.Stat(filepath.Join(home, "workspace")); err == nil {
		t.Errorf("init created the default workspace although reef.yaml names another")
	}

	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte("agents: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = reef(t, env{"REEF_HOME": home}, "", "init")
	if res.code == 0 || !strings.Contains(res.stderr, "reef.yaml") {
		t.Errorf("init with a broken reef.yaml: exit %d, stderr %q; want an error naming the file", res.code, res.stderr)
	}
}

// TestAdminCommandsNeedNoProvider: reading reef's records works without an LLM provider;
// commands that talk to a model still explain what to set.
func TestAdminCommandsNeedNoProvider(t *testing.T) {
	e := env{"REEF_HOME": newHome(t), "HOME": t.TempDir()}
	for _, args := range [][]string{{"status"}, {"sessions", "list"}, {"pairing", "list"}, {"cron", "list"}} {
		if res := reef(t, e, "", args...); res.code != 0 || strings.Contains(res.stderr, "needs an LLM provider") {
			t.Errorf("reef %v without a provider = %d\n%s%s", args, res.code, res.stdout, res.stderr)
		}
	}
	if res := reef(t, e, "hi\n", "chat"); res.code == 0 || !strings.Contains(res.stderr, "needs an LLM provider") {
		t.Errorf("reef chat without a provider = %d %q, want the provider help", res.code, res.stderr)
	}
}
