package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu/feishutest"
)

// discordYAML is a config with one Discord bot on the fake.
func discordYAML(token, apiBase string) string {
	return fmt.Sprintf("channels:\n  discord:\n    token: %s\n    apiBase: %s\n    dmPolicy: open\n    allowFrom: [\"*\"]\n", token, apiBase)
}

// TestE2EDiscordSessionInvalidated: the gateway stops acknowledging heartbeats, discordgo
// closes with 1000 (which ends the session on Discord), and three messages are sent before the
// new session's READY; Discord never replays them. All three are answered once after the
// new session, none twice (#24 bug 2).
func TestE2EDiscordSessionInvalidated(t *testing.T) {
	const token = "discord-canary-token.invalid.Q3"
	dc := discordtest.New(t, discordtest.Config{Token: token, HeartbeatInterval: 100 * time.Millisecond})
	llm := newEchoLLM(t, 10*time.Millisecond, nil)
	home, e := writeConfig(t, llm.srv, discordYAML(token, dc.URL))
	n := newNode(t, e)
	sent := func(chat string) []string { return dc.Sent(chat) }
	if !eventually(30*time.Second, dc.Connected) {
		t.Fatalf("the bot did not connect; logs:\n%s", tail(n.logs(), 8000))
	}
	chats := []string{"8001", "8002", "8003"}
	before, gap := map[string]string{}, map[string]string{}
	for i, chat := range chats {
		before[chat] = tok("before"+chat, i)
		dc.UserSays(t, chat, fmt.Sprint(9000+i), "answer "+before[chat])
	}
	answeredOnce(t, n, sent, 30*time.Second, before)

	dc.HoldIdentify() // the new session's READY comes after the three messages
	dc.Stall(true)
	if !eventually(30*time.Second, func() bool { return dc.Invalidated() >= 1 }) {
		t.Fatalf("the bot did not close its session after missing heartbeat ACKs; logs:\n%s", tail(n.logs(), 8000))
	}
	dc.Stall(false)
	for i, chat := range chats {
		gap[chat] = tok("gap"+chat, i)
		dc.UserSays(t, chat, fmt.Sprint(9000+i), "answer "+gap[chat])
	}
	if dc.Missed() < 3 {
		t.Fatalf("%d dispatches missed; the test needs the 3 messages sent without a session", dc.Missed())
	}
	dc.ReleaseIdentify()
	answeredOnce(t, n, sent, 30*time.Second, gap)
	n.stop()
	for _, chat := range chats {
		want := []string{replyTo(before[chat]), replyTo(gap[chat])}
		if got := dc.Sent(chat); !slices.Equal(got, want) {
			t.Errorf("channel %s shows %q, want exactly %q%s", chat, got, want, placeholderNote(got))
		}
		if k := llm.requests(gap[chat]); k != 1 {
			t.Errorf("the model was asked about %s %d times, want once", gap[chat], k)
		}
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), token, canary)
}

// killBurst is the crash harness for one platform: chats write one message after another
// (each after the previous was answered) while reef is SIGKILLed and restarted; in the end
// every message has exactly one reply and no "…" draft is left. Each chat is answered once
// before the kills: on Discord, the bot reads what was sent while reef was down in the
// channels it has served (a channel's very first message sent while reef is down is not seen).
func killBurst(t *testing.T, n *node, chats []string, perChat, kills int,
	say func(chat, text string), sent func(chat string) []string) {
	t.Helper()
	warm := map[string]string{}
	for _, chat := range chats {
		warm[chat] = tok(chat, 99)
		say(chat, "answer "+warm[chat])
	}
	answeredOnce(t, n, sent, time.Minute, warm)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lost []string
	for _, chat := range chats {
		wg.Go(func() {
			for i := range perChat {
				marker := tok(chat, i)
				say(chat, "answer "+marker)
				if !eventually(2*time.Minute, func() bool { return slices.Contains(sent(chat), replyTo(marker)) }) {
					mu.Lock()
					lost = append(lost, marker)
					mu.Unlock()
					return
				}
			}
		})
	}
	for k := range kills {
		time.Sleep(time.Duration(300+150*k) * time.Millisecond) // a moment in the burst
		n.kill()
		n.start()
	}
	wg.Wait()
	n.stop()
	if len(lost) > 0 {
		t.Errorf("%d messages got no reply (lost), e.g. %v\nlogs:\n%s", len(lost), lost[:min(len(lost), 10)], tail(n.logs(), 6000))
	}
	for _, chat := range chats {
		want := []string{replyTo(warm[chat])}
		for i := range perChat {
			want = append(want, replyTo(tok(chat, i)))
		}
		if got := sent(chat); !slices.Equal(got, want) {
			t.Errorf("chat %s shows %q, want exactly %q%s", chat, got, want, placeholderNote(got))
		}
	}
}

// TestE2EDiscordKillDuringBurst: the crash harness on Discord (0 lost, 0 doubled, no draft
// left: Discord lets the bot delete it).
func TestE2EDiscordKillDuringBurst(t *testing.T) {
	const token = "discord-canary-token.kill.W8"
	dc := discordtest.New(t, discordtest.Config{Token: token})
	llm := newEchoLLM(t, 30*time.Millisecond, nil)
	home, e := writeConfig(t, llm.srv, discordYAML(token, dc.URL))
	n := newNode(t, e)
	if !eventually(30*time.Second, dc.Connected) {
		t.Fatalf("the bot did not connect; logs:\n%s", tail(n.logs(), 8000))
	}
	var chats []string
	for i := range 6 {
		chats = append(chats, fmt.Sprint(8100+i))
	}
	killBurst(t, n, chats, 5, 2, func(chat, text string) { dc.UserSays(t, chat, "9"+chat, text) }, dc.Sent)
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), token, canary)
}

// TestE2EFeishuKillDuringBurst: the crash harness on Feishu's long connection, which pushes
// events concurrently (0 lost, 0 doubled, no draft left: Feishu lets the bot recall it).
func TestE2EFeishuKillDuringBurst(t *testing.T) {
	const appSecret = "feishu-canary-app-secret-kill-7d"
	fs := feishutest.New(t, feishutest.Config{AppID: fmt.Sprintf("cli_kill_%d", time.Now().UnixNano()),
		AppSecret: appSecret, Concurrent: true})
	llm := newEchoLLM(t, 30*time.Millisecond, nil)
	home, e := writeConfig(t, llm.srv, fmt.Sprintf("channels:\n  feishu:\n    appId: %s\n    appSecret: %s\n    domain: %s\n    dmPolicy: open\n    allowFrom: [\"*\"]\n",
		fs.AppID, appSecret, fs.URL))
	n := newNode(t, e)
	if !eventually(30*time.Second, fs.Connected) {
		t.Fatalf("the bot did not connect; logs:\n%s", tail(n.logs(), 8000))
	}
	var chats []string
	for i := range 6 {
		chats = append(chats, fmt.Sprintf("ockill%d", i))
	}
	killBurst(t, n, chats, 5, 2, func(chat, text string) { fs.UserSays(chat, "ou_"+chat, text) }, fs.Sent)
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), appSecret, canary)
}

// TestE2EStatusSaysWhyAChannelIsDown: `reef status` names each platform's last error in words
// a user can act on: Discord without the Message Content intent (the channel stops), Feishu
// at its connection limit (it keeps retrying).
func TestE2EStatusSaysWhyAChannelIsDown(t *testing.T) {
	const token, appSecret = "discord-canary-token.status.Z1", "feishu-canary-app-secret-status-2b"
	dc := discordtest.New(t, discordtest.Config{Token: token, DisallowedIntents: discordtest.IntentMessageContent})
	fs := feishutest.New(t, feishutest.Config{AppID: fmt.Sprintf("cli_status_%d", time.Now().UnixNano()), AppSecret: appSecret})
	fs.RefuseConnections(1 << 20)
	llm := newEchoLLM(t, 0, nil)
	home, e := writeConfig(t, llm.srv, discordYAML(token, dc.URL)+fmt.Sprintf("  feishu:\n    appId: %s\n    appSecret: %s\n    domain: %s\n",
		fs.AppID, appSecret, fs.URL))
	n := newNode(t, e)
	var out string
	ok := eventually(60*time.Second, func() bool {
		out = reef(t, e, "", "status").stdout
		return strings.Contains(out, "Message Content intent") && strings.Contains(out, "connection limit reached")
	})
	n.stop()
	if !ok {
		t.Fatalf("reef status does not say why the channels are down:\n%s\nlogs:\n%s", out, tail(n.logs(), 6000))
	}
	t.Logf("reef status:\n%s", out)
	noSecrets(t, home, n.logs(), token, canary)
}
