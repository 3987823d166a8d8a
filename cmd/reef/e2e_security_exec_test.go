package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// The security suite, round three (#39), exec's part: attacks from a command the owner
// approved, through the real binary and the Telegram fake.

// TestE2ESecurityExecCannotDriveReef: a group member asks for a command, the owner approves
// it once, and the command turns on reef: it runs `reef pairing approve` for a stranger's
// pending request and `reef cron add` through the control socket (by its path, and through
// /proc/<pid>/root of a process outside its namespaces), and reads the gateway token, the
// database and the backups. Under
// the default sandbox the data dir is not there at all; with the sandbox off the files are
// readable (documented) but the control socket still refuses the command. Either way the
// stranger stays unpaired and no job is planted, while the owner's own `reef` still works.
func TestE2ESecurityExecCannotDriveReef(t *testing.T) {
	for _, sandbox := range []string{"auto", "off"} {
		t.Run("sandbox "+sandbox, func(t *testing.T) { execAttacksReef(t, sandbox) })
	}
}

func execAttacksReef(t *testing.T, sandbox string) {
	const (
		owner    = int64(500)
		guest    = int64(42)
		stranger = int64(777)
		group    = int64(-1001234)
	)
	tg := telegramtest.NewWithToken(t, tgToken)
	var mu sync.Mutex
	var attack string
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == messages.RoleTool {
			return fake.Reply{Text: "done"}
		}
		if strings.Contains(lastUser(req), "run the thing") {
			mu.Lock()
			defer mu.Unlock()
			args := fmt.Sprintf(`{"command":%q}`, attack)
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "x1", Name: "exec", Arguments: args}}}
		}
		return fake.Reply{Text: "hello"}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	home, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["500"]`, `groups: ["-1001234"]`,
		`groupTools:`, `  "-1001234": {allow: [exec]}`)+"tools:\n  exec:\n    sandbox: "+sandbox+"\n")
	n := newNode(t, e)

	tg.UserSays(owner, owner, "hi")
	if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(owner), "hello") }) {
		t.Fatalf("the owner got no answer: %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	tg.UserSays(stranger, stranger, "let me in")
	code := regexp.MustCompile(`approve telegram ([A-Z0-9]{8})`).FindStringSubmatch(strings.Join(waitSent(t, tg, stranger, 1), "\n"))
	if code == nil {
		t.Fatalf("no pairing code: %q", tg.Sent(stranger))
	}
	if res := reef(t, e, "", "backup"); res.code != 0 { // the owner's reef is served
		t.Fatalf("reef backup = %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	data := filepath.Join(home, "data")
	var b strings.Builder
	fmt.Fprintf(&b, "export %s=1 GORACE=atexit_sleep_ms=0; B=%s; ", reexecEnv, os.Args[0])
	homes := []string{home}
	// Through /proc/<pid>/root of a process outside any namespace of the command's: this
	// test, which (unlike reef) is dumpable.
	homes = append(homes, fmt.Sprintf("/proc/%d/root%s", os.Getpid(), home))
	for _, h := range homes {
		fmt.Fprintf(&b, "REEF_HOME=%s $B pairing approve telegram %s 2>&1; ", h, code[1])
		fmt.Fprintf(&b, "REEF_HOME=%s $B cron add -name planted -every 1m -text 'run exec' 2>&1; ", h)
	}
	fmt.Fprintf(&b, "cat %s/gateway-token 2>&1; head -c 16 %s/reef.db | od -c | head -1; ls %s %s/backups 2>&1; echo probed",
		data, data, data, home)
	mu.Lock()
	attack = b.String()
	mu.Unlock()

	mention := "@" + tg.BotUser().Username
	m := tg.Message(group, telego.ChatTypeSupergroup, guest, mention+" run the thing")
	m.Entities = []telego.MessageEntity{{Type: telego.EntityTypeMention, Offset: 0, Length: len(mention)}}
	tg.Queue(telego.Update{Message: m})
	idRE := regexp.MustCompile(`Approval needed \[([A-Z0-9]{6})\]`)
	var id string
	if !eventually(60*time.Second, func() bool {
		for _, s := range tg.Sent(owner) {
			if mm := idRE.FindStringSubmatch(s); mm != nil {
				id = mm[1]
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no approval request reached the owner: %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	tg.UserSays(owner, owner, "/approve "+id)
	var out string
	if !eventually(90*time.Second, func() bool {
		for _, r := range script.Requests() {
			if last := r.Messages[len(r.Messages)-1]; last.Role == messages.RoleTool && strings.Contains(last.Content, "probed") {
				out = last.Content
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the command's output never reached the model; logs:\n%s", tail(n.logs(), 4000))
	}
	t.Logf("what the command got:\n%s", out)

	if strings.Contains(out, "approved") || strings.Contains(out, "added") {
		t.Errorf("the command drove reef:\n%s", out)
	}
	token, err := os.ReadFile(filepath.Join(data, "gateway-token"))
	if err != nil {
		t.Fatal(err)
	}
	secretsVisible := strings.Contains(out, strings.TrimSpace(string(token))) || strings.Contains(out, "[redacted]") ||
		strings.Contains(out, "reef.sock") || regexp.MustCompile(`reef-\d{8}T\d{6}Z`).MatchString(out) // a backup's name
	if want := sandbox == "off"; secretsVisible != want {
		t.Errorf("sandbox %s: the data dir and backups visible to the command: %v, want %v:\n%s", sandbox, secretsVisible, want, out)
	}
	if sandbox == "off" && strings.Count(out, "does not serve this process") != 4 {
		t.Errorf("with the sandbox off, the control socket's refusal is not what stopped the command:\n%s", out)
	}
	if sandbox == "off" && !strings.Contains(n.logs(), "control socket: refused a process") {
		t.Errorf("no log line for the refused process")
	}

	// The owner's own reef, beside the gateway, is served: the request still waits, no job.
	if res := reef(t, e, "", "pairing", "list"); !strings.Contains(res.stdout, code[1]) {
		t.Errorf("the stranger's request is no longer pending:\n%s%s", res.stdout, res.stderr)
	}
	if res := reef(t, e, "", "cron", "list"); res.code != 0 || strings.Contains(res.stdout, "planted") {
		t.Errorf("reef cron list = %d, a job was planted:\n%s%s", res.code, res.stdout, res.stderr)
	}
	n.stop()
}
