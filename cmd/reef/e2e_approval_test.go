package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2ETelegramExecApproval runs `reef gateway` with the default approvals (owner) and exec
// granted to the members of one Telegram group: a member asks for a command; the owner's
// direct chat gets the request, the group is told it waits, `reef security approvals` lists
// it; the owner's /approve runs it once, and the decision is audited.
func TestE2ETelegramExecApproval(t *testing.T) {
	const (
		owner = int64(500)
		guest = int64(42)
		group = int64(-1001234)
	)
	tg := telegramtest.NewWithToken(t, tgToken)
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == messages.RoleTool {
			return fake.Reply{Text: "ran it: " + strings.TrimSpace(last.Content)}
		}
		if strings.Contains(lastUser(req), "run the thing") {
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "x1", Name: "exec", Arguments: `{"command":"echo ran >> ran.txt"}`}}}
		}
		return fake.Reply{Text: "hello"}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	home, e := writeConfig(t, srv, telegramYAML(tg.URL, `allowFrom: ["500"]`, `groups: ["-1001234"]`,
		`groupTools:`, `  "-1001234": {allow: [exec]}`))
	n := newNode(t, e)

	tg.UserSays(owner, owner, "hi")
	if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(owner), "hello") }) {
		t.Fatalf("the owner got no answer: %q; logs:\n%s", tg.Sent(owner), tail(n.logs(), 4000))
	}
	mention := "@" + tg.BotUser().Username
	m := tg.Message(group, telego.ChatTypeSupergroup, guest, mention+" run the thing")
	m.Entities = []telego.MessageEntity{{Type: telego.EntityTypeMention, Offset: 0, Length: len(mention)}}
	tg.Queue(telego.Update{Message: m})

	var id string
	idRE := regexp.MustCompile(`Approval needed \[([A-Z0-9]{6})\]`)
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
	if !eventually(30*time.Second, func() bool {
		return slices.ContainsFunc(tg.Sent(group), func(s string) bool { return strings.Contains(s, "Waiting for the owner to approve") })
	}) {
		t.Errorf("the group was not told the command waits: %q", tg.Sent(group))
	}
	ranFile := filepath.Join(home, "workspace", "ran.txt")
	if _, err := os.Stat(ranFile); err == nil {
		t.Fatal("the command ran before the owner approved it")
	}
	if res := reef(t, e, "", "security", "approvals"); !strings.Contains(res.stdout, id) || !strings.Contains(res.stdout, "echo ran >> ran.txt") {
		t.Errorf("reef security approvals does not list %s (exit %d):\n%s%s", id, res.code, res.stdout, res.stderr)
	}

	if res := reef(t, e, "", "status"); !strings.Contains(res.stdout, "exec approvals waiting: 1 (oldest "+id) {
		t.Errorf("reef status does not show the waiting command:\n%s%s", res.stdout, res.stderr)
	}

	tg.UserSays(owner, owner, "/approve "+id)
	if !eventually(60*time.Second, func() bool {
		return slices.ContainsFunc(tg.Sent(group), func(s string) bool { return strings.HasPrefix(s, "ran it") })
	}) {
		t.Fatalf("the group got no answer after the approval: %q; owner %q; logs:\n%s", tg.Sent(group), tg.Sent(owner), tail(n.logs(), 4000))
	}
	b, err := os.ReadFile(ranFile)
	if err != nil || string(b) != "ran\n" {
		t.Errorf("ran.txt = %q (%v), want the command run once", b, err)
	}
	res := reef(t, e, "", "security", "approvals", "-json")
	var v approvalsView
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("security approvals -json: %v\n%s%s", err, res.stdout, res.stderr)
	}
	if len(v.Pending) != 0 || len(v.Decisions) != 1 || v.Decisions[0].ID != id || v.Decisions[0].Decision != access.DecisionApproved ||
		v.Decisions[0].By != "telegram:500" || v.Decisions[0].SenderID != "42" {
		t.Errorf("approvals after the decision: %+v", v)
	}
	if !strings.Contains(n.logs(), `"message":"exec approval"`) && !strings.Contains(n.logs(), "exec approval") {
		t.Errorf("no audit log line")
	}
	n.stop()
	checkSettled(t, home)

	// Without a gateway: deciding needs the run that asked, revoking works on the database.
	if res := reef(t, e, "", "security", "approvals", "approve", id); res.code != 1 || !strings.Contains(res.stderr, "no reef gateway is running") {
		t.Errorf("approve without a gateway: exit %d: %s", res.code, res.stderr)
	}
	if res := reef(t, e, "", "security", "approvals", "revoke", "echo"); res.code != 1 || !strings.Contains(res.stderr, "no stored prefix") {
		t.Errorf("revoke of a prefix never stored: exit %d: %s", res.code, res.stderr)
	}
	if res := reef(t, e, "", "security", "approvals", "frobnicate"); res.code != 2 {
		t.Errorf("a wrong subcommand: exit %d, want 2", res.code)
	}
}
