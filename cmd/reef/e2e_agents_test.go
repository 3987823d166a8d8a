package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// personaRE finds the persona an agent's SOUL.md gives it in a request's system prompt.
var personaRE = regexp.MustCompile(`PERSONA=([a-z]+)`)

// TestE2ETwoAgentsTwoBots runs two agents with their own persona and workspace behind two
// Telegram bots (two fake Bot API servers, two tokens) and one Discord channel: bindings send
// the office bot and the Discord channel to agent work, everything else to agent main. Each
// answers in its own persona through the bot that received the message, and neither
// conversation reaches the other's model requests.
func TestE2ETwoAgentsTwoBots(t *testing.T) {
	const (
		homeToken   = "111111:AAhomeBotToken_e2e_agents_000000001"
		officeToken = "222222:AAofficeBotToken_e2e_agents_0000002"
		dcToken     = "discord-agents-token.e2e.Z9"
	)
	tgHome := telegramtest.NewWithToken(t, homeToken)
	tgOffice := telegramtest.NewWithToken(t, officeToken)
	dc := discordtest.New(t, discordtest.Config{Token: dcToken})

	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		persona := "nobody"
		if m := personaRE.FindStringSubmatch(req.System); m != nil {
			persona = m[1]
		}
		marks := tokenRE.FindAllString(lastUser(req), -1)
		if len(marks) == 0 {
			return fake.Reply{Text: persona + ": ok"}
		}
		return fake.Reply{Text: persona + ": " + replyTo(marks[len(marks)-1])}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)

	base := t.TempDir()
	wsMain, wsWork := filepath.Join(base, "ws-main"), filepath.Join(base, "ws-work")
	for dir, persona := range map[string]string{wsMain: "pirate", wsWork: "butler"} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SOUL.md"), []byte("PERSONA="+persona+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	yaml := fmt.Sprintf(`agents:
  - id: main
    workspace: %s
  - id: work
    workspace: %s
channels:
  telegram:
    dmPolicy: open
    allowFrom: ["*"]
    accounts:
      home:
        botToken: "%s"
        apiRoot: %s
      office:
        botToken: "%s"
        apiRoot: %s
  discord:
    token: %s
    apiBase: %s
    dmPolicy: open
    allowFrom: ["*"]
    groups: ["c1"]
    requireMention: false
bindings:
  - agentId: work
    match: {channel: telegram, accountId: office}
  - agentId: work
    match: {channel: discord, peer: {kind: channel, id: c1}}
`, wsMain, wsWork, homeToken, tgHome.URL, officeToken, tgOffice.URL, dcToken, dc.URL)
	home, e := writeConfig(t, srv, yaml)
	n := newNode(t, e)
	if !eventually(30*time.Second, dc.Connected) {
		t.Fatalf("discord did not connect; logs:\n%s", tail(n.logs(), 8000))
	}

	// The same person (42) writes to both bots, and in the Discord channel and a Discord DM.
	tgHome.UserSays(42, 42, "hello "+tok("home", 0))
	tgOffice.UserSays(42, 42, "hello "+tok("office", 0))
	dc.GuildMessage(t, "g1", "c1", "77", "hello "+tok("dcchan", 0))
	dc.UserSays(t, "d1", "77", "hello "+tok("dcdm", 0))
	want := map[string]func() []string{
		"pirate: " + replyTo(tok("home", 0)):   func() []string { return tgHome.Sent(42) },
		"butler: " + replyTo(tok("office", 0)): func() []string { return tgOffice.Sent(42) },
		"butler: " + replyTo(tok("dcchan", 0)): func() []string { return dc.Sent("c1") },
		"pirate: " + replyTo(tok("dcdm", 0)):   func() []string { return dc.Sent("d1") },
	}
	for text, sent := range want {
		if !eventually(60*time.Second, func() bool { return slices.Contains(sent(), text) }) {
			t.Errorf("no %q; that chat got %q; logs:\n%s", text, sent(), tail(n.logs(), 6000))
		}
	}
	// A second message to each bot: each conversation goes on with its own history only.
	tgHome.UserSays(42, 42, "again "+tok("home", 1))
	tgOffice.UserSays(42, 42, "again "+tok("office", 1))
	for _, w := range []struct {
		text string
		sent func() []string
	}{
		{"pirate: " + replyTo(tok("home", 1)), func() []string { return tgHome.Sent(42) }},
		{"butler: " + replyTo(tok("office", 1)), func() []string { return tgOffice.Sent(42) }},
	} {
		if !eventually(60*time.Second, func() bool { return slices.Contains(w.sent(), w.text) }) {
			t.Errorf("no %q; that chat got %q", w.text, w.sent())
		}
	}
	// Replies went out through the bot that received the message, and only there.
	for _, m := range tgHome.Sent(42) {
		if strings.Contains(m, "office") {
			t.Errorf("the home bot sent %q, which belongs to the office bot's chat", m)
		}
	}
	for _, m := range tgOffice.Sent(42) {
		if strings.Contains(m, "home") {
			t.Errorf("the office bot sent %q, which belongs to the home bot's chat", m)
		}
	}

	// Every model request carries one agent's workspace and one conversation's messages.
	for _, req := range script.Requests() {
		all := ""
		for _, m := range req.Messages {
			all += m.Content + "\n"
		}
		marks := tokenRE.FindAllString(all, -1)
		if len(marks) == 0 {
			continue
		}
		chat := strings.Split(marks[0], "-")[1]
		for _, m := range marks {
			if strings.Split(m, "-")[1] != chat {
				t.Errorf("one request holds %s and %s: one conversation saw another's", marks[0], m)
			}
		}
		ws, persona := wsMain, "pirate"
		if chat == "office" || chat == "dcchan" {
			ws, persona = wsWork, "butler"
		}
		if !strings.Contains(req.System, ws) || !strings.Contains(req.System, "PERSONA="+persona) {
			t.Errorf("the request for %s lacks workspace %s or persona %s", marks[0], ws, persona)
		}
		if other := map[string]string{wsMain: wsWork, wsWork: wsMain}[ws]; strings.Contains(req.System, other) {
			t.Errorf("the request for %s names the other agent's workspace %s", marks[0], other)
		}
	}

	// reef status lists each account's connector.
	st := reef(t, e, "", "status")
	for _, name := range []string{"telegram:home", "telegram:office", "discord"} {
		if !strings.Contains(st.stdout, "channel "+name+" ") {
			t.Errorf("reef status lacks %s:\n%s", name, st.stdout)
		}
	}
	n.stop()

	keys := sessionKeys(t, home)
	for _, k := range []string{"agent:main:telegram:direct:42", "agent:work:telegram:direct:42",
		"agent:work:discord:group:c1", "agent:main:discord:direct:77"} {
		if !slices.Contains(keys, k) {
			t.Errorf("no session %s; sessions: %q", k, keys)
		}
	}
	checkSettled(t, home)
}

// sessionKeys lists the sessions stored under home (the gateway must have stopped).
func sessionKeys(t *testing.T, home string) []string {
	t.Helper()
	st, err := bolt.Open(filepath.Join(home, "data", "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatalf("open the database: %v", err)
	}
	defer st.Close()
	var keys []string
	if err := st.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		for _, in := range infos {
			keys = append(keys, in.Key)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}
