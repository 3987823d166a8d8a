package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu/feishutest"
)

// End-to-end tests of platforms that deliver an event more than once: Feishu resends webhook
// events, Discord replays dispatches after a RESUME. Each message must run the agent once and
// get one reply, also when the copy arrives after reef was killed and restarted.

// slowFirst holds the first run of a message whose marker contains "-s" for d: long enough
// to kill reef while the run waits for the model.
func slowFirst(d time.Duration) func(string) time.Duration {
	return func(marker string) time.Duration {
		if strings.Contains(marker, "-s") {
			return d
		}
		return 0
	}
}

// placeholderNote explains a chat that holds a message that is no reply: the draft reef
// sends when a run starts and edits into the reply.
func placeholderNote(got []string) string {
	for _, m := range got {
		if !tokenRE.MatchString(m) {
			return fmt.Sprintf(" (%q is no reply: a draft left behind instead of being edited into the reply)", m)
		}
	}
	return ""
}

// answeredOnce waits until every chat shows the reply to its marker; it fails with what the
// chats hold if that does not happen within timeout.
func answeredOnce(t *testing.T, n *node, sent func(chat string) []string, timeout time.Duration, chats map[string]string) {
	t.Helper()
	ok := eventually(timeout, func() bool {
		for chat, marker := range chats {
			if !slices.Contains(sent(chat), replyTo(marker)) {
				return false
			}
		}
		return true
	})
	if ok {
		return
	}
	var missing []string
	for chat, marker := range chats {
		if !slices.Contains(sent(chat), replyTo(marker)) {
			missing = append(missing, fmt.Sprintf("%s (%s): %q", chat, marker, sent(chat)))
		}
	}
	slices.Sort(missing)
	t.Fatalf("no reply within %v in %d chats: %v\nlogs:\n%s", timeout, len(missing), missing, tail(n.logs(), 8000))
}

// TestE2EFeishuWebhookRedeliveries: Feishu events by webhook, some delivered again (same
// event, or the same message in a new event), before and after a SIGKILL while runs were in
// progress: every message is answered exactly once.
func TestE2EFeishuWebhookRedeliveries(t *testing.T) {
	const (
		appSecret = "feishu-canary-app-secret-5e0c2b"
		encrypt   = "feishu-canary-encrypt-key-91d7"
		verify    = "feishu-canary-verification-3a8f"
	)
	fs := feishutest.New(t, feishutest.Config{AppID: fmt.Sprintf("cli_e2e_%d", time.Now().UnixNano()),
		AppSecret: appSecret, VerificationToken: verify})
	addr := freeAddr(t)
	fs.UseWebhook(func() string { return "http://" + addr + "/feishu/events" }, encrypt)
	llm := newEchoLLM(t, 10*time.Millisecond, slowFirst(30*time.Second))
	home, e := writeConfig(t, llm.srv, fmt.Sprintf(`channels:
  feishu:
    appId: %s
    appSecret: %s
    domain: %s
    mode: webhook
    encryptKey: %s
    verificationToken: %s
    webhookListen: %s
    dmPolicy: open
    allowFrom: ["*"]
`, fs.AppID, appSecret, fs.URL, encrypt, verify, addr))
	n := newNode(t, e)
	sent := func(chat string) []string { return fs.Sent(chat) }

	all := map[string]string{}    // chat → the marker of its one message
	events := map[string]string{} // chat → its event id
	msgIDs := map[string]string{} // chat → its message id
	push := func(prefix string, count int) map[string]string {
		batch := map[string]string{}
		for i := range count {
			chat := fmt.Sprintf("oc_%s%d", prefix, i)
			marker := tok(prefix+fmt.Sprint(i), 0)
			ev, mid := fs.Push(feishutest.Message{ChatID: chat, SenderID: "ou_" + prefix + fmt.Sprint(i), Text: "answer " + marker})
			batch[chat], all[chat], events[chat], msgIDs[chat] = marker, marker, ev, mid
		}
		return batch
	}

	// 1. Ten messages, answered.
	first := push("a", 10)
	answeredOnce(t, n, sent, 30*time.Second, first)
	// 2. Every one of them delivered again, five also as a new event of the same message.
	for chat := range first {
		fs.Redeliver(events[chat])
	}
	for i := range 5 {
		chat := fmt.Sprintf("oc_a%d", i)
		fs.Push(feishutest.Message{ChatID: chat, SenderID: fmt.Sprintf("ou_a%d", i), MessageID: msgIDs[chat], Text: "answer " + first[chat]})
	}
	// Events are delivered one at a time, in order: once later messages are answered, every
	// copy before them was delivered and acknowledged.
	answeredOnce(t, n, sent, 30*time.Second, push("b", 5))
	for chat := range first {
		if got := fs.Attempts(events[chat]); len(got) < 2 || got[len(got)-1] != 200 {
			t.Errorf("event of %s: deliveries answered %v, want two or more ending in 200", chat, got)
		}
	}

	// 3. Five runs wait for the model; reef is killed; their events and the first ten are
	// delivered again while it is down and after it is back.
	slow := push("s", 5)
	if !eventually(30*time.Second, func() bool {
		for _, marker := range slow {
			if llm.requests(marker) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the slow messages did not reach the model; logs:\n%s", tail(n.logs(), 8000))
	}
	// A later message answered: what the slow runs recorded when they started (their draft
	// replies) is committed; the kill hits runs waiting for the model, nothing else.
	answeredOnce(t, n, sent, 30*time.Second, push("f", 1))
	n.kill()
	for chat := range slow {
		fs.Redeliver(events[chat])
	}
	n.start()
	for chat := range first {
		fs.Redeliver(events[chat])
	}
	answeredOnce(t, n, sent, 60*time.Second, slow)
	for chat := range slow {
		fs.Redeliver(events[chat])
	}
	answeredOnce(t, n, sent, 30*time.Second, push("c", 5))
	n.stop()

	for chat, marker := range all {
		if got := fs.Sent(chat); !slices.Equal(got, []string{replyTo(marker)}) {
			t.Errorf("chat %s got %q, want exactly %q%s", chat, got, replyTo(marker), placeholderNote(got))
		}
		want := 1
		if strings.Contains(marker, "-s") {
			want = 2 // the killed run, then its recovery
		}
		if got := llm.requests(marker); got != want {
			t.Errorf("the model was asked about %s %d times, want %d", marker, got, want)
		}
	}
	redelivered := 0
	for chat := range all {
		redelivered += len(fs.Attempts(events[chat])) - 1
	}
	if redelivered < 30 {
		t.Errorf("only %d deliveries were copies; the test meant at least 30", redelivered)
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), append([]string{appSecret, encrypt, verify, canary}, fs.Tokens()...)...)
	t.Logf("%d messages, %d copies delivered (plus 5 new events of old messages), 1 SIGKILL, %d model requests",
		len(all), redelivered, llm.total())
}

// TestE2EDiscordResumeReplay: Discord dispatches replayed after dropped sockets (RESUME) and
// a SIGKILL with runs in progress: every message is answered exactly once.
func TestE2EDiscordResumeReplay(t *testing.T) {
	const token = "discord-canary-token.e2e.Xy7Q"
	dc := discordtest.New(t, discordtest.Config{Token: token})
	llm := newEchoLLM(t, 10*time.Millisecond, slowFirst(30*time.Second))
	home, e := writeConfig(t, llm.srv, fmt.Sprintf(`channels:
  discord:
    token: %s
    apiBase: %s
    dmPolicy: open
    allowFrom: ["*"]
`, token, dc.URL))
	n := newNode(t, e)
	sent := func(chat string) []string { return dc.Sent(chat) }
	connected := func(identifies int) {
		t.Helper()
		if !eventually(30*time.Second, func() bool { return dc.Identifies() >= identifies && dc.Connected() }) {
			t.Fatalf("the bot did not connect to the fake Discord; logs:\n%s", tail(n.logs(), 8000))
		}
	}
	connected(1)

	all := map[string]string{}
	next := 7000
	say := func(prefix string, count int) map[string]string {
		batch := map[string]string{}
		for range count {
			chat := fmt.Sprint(next)
			marker := tok(prefix+chat, 0)
			dc.UserSays(t, chat, fmt.Sprint(next+100000), "answer "+marker)
			batch[chat], all[chat] = marker, marker
			next++
		}
		return batch
	}

	// 1. Ten messages on a healthy socket.
	answeredOnce(t, n, sent, 30*time.Second, say("a", 10))
	// 2. The socket drops in the middle of ten messages and stays down for ten more: the
	// bot RESUMEs and the fake replays what it missed.
	mid := say("b", 5)
	dc.Drop()
	for k, v := range say("b", 15) {
		mid[k] = v
	}
	answeredOnce(t, n, sent, 30*time.Second, mid)
	if dc.Resumes() == 0 || dc.Replayed() == 0 {
		t.Fatalf("after a drop: %d RESUMEs, %d dispatches replayed; the test needs both", dc.Resumes(), dc.Replayed())
	}
	// 3. Five runs wait for the model; reef is killed and restarted (a new session: Discord
	// does not replay to it, so the runs come back from reef's inbox).
	slow := say("s", 5)
	if !eventually(30*time.Second, func() bool {
		for _, marker := range slow {
			if llm.requests(marker) == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the slow messages did not reach the model; logs:\n%s", tail(n.logs(), 8000))
	}
	// A later message answered: what the slow runs recorded when they started (their draft
	// replies) is committed; the kill hits runs waiting for the model, nothing else.
	answeredOnce(t, n, sent, 30*time.Second, say("f", 1))
	identifies := dc.Identifies()
	n.restart()
	connected(identifies + 1)
	answeredOnce(t, n, sent, 60*time.Second, slow)
	// 4. More drops on the new connection, with messages before and during each.
	for round := range 3 {
		batch := say(fmt.Sprintf("d%d", round), 4)
		dc.Drop()
		for k, v := range say(fmt.Sprintf("e%d", round), 4) {
			batch[k] = v
		}
		answeredOnce(t, n, sent, 30*time.Second, batch)
	}
	n.stop()

	for chat, marker := range all {
		if got := dc.Sent(chat); !slices.Equal(got, []string{replyTo(marker)}) {
			t.Errorf("channel %s got %q, want exactly %q%s", chat, got, replyTo(marker), placeholderNote(got))
		}
		want := 1
		if strings.Contains(marker, "-s") {
			want = 2
		}
		if got := llm.requests(marker); got != want {
			t.Errorf("the model was asked about %s %d times, want %d", marker, got, want)
		}
	}
	if llm.noMark != 0 {
		t.Errorf("%d model requests carried no test message (the bot answered something else, e.g. its own reply)", llm.noMark)
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), token, canary)
	t.Logf("%d messages, %d RESUMEs, %d dispatches replayed, 1 SIGKILL, %d model requests",
		len(all), dc.Resumes(), dc.Replayed(), llm.total())
}
