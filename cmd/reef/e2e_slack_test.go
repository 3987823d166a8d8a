package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// Tokens of the Slack end-to-end tests: canaries that must appear in no log and no database.
const (
	slackBotToken = "xoxb-canary-bot-token-5Hq2"
	slackAppToken = "xapp-canary-app-token-9Zt7"
)

func slackYAML(apiURL string) string {
	return fmt.Sprintf("tools:\n  web:\n    allowPrivate: [\"127.0.0.1/32\"]\n"+
		"channels:\n  slack:\n    botToken: ${SLACK_BOT_TOKEN}\n    appToken: ${SLACK_APP_TOKEN}\n    apiUrl: %s\n"+
		"    dmPolicy: open\n    allowFrom: [\"*\"]\n    groups: [\"*\"]\n", apiURL)
}

// slackNode starts reef on a fake Slack with the tokens given through the environment.
func slackNode(t *testing.T, sl *slacktest.Server, srv *openaitest.Server) (*node, string) {
	t.Helper()
	home, e := writeConfig(t, srv, slackYAML(sl.APIURL))
	e["SLACK_BOT_TOKEN"], e["SLACK_APP_TOKEN"] = slackBotToken, slackAppToken
	n := newNode(t, e)
	if !eventually(30*time.Second, func() bool { return sl.Connections() > 0 }) {
		t.Fatalf("the bot did not connect; logs:\n%s", tail(n.logs(), 8000))
	}
	return n, home
}

func newSlack(t *testing.T) *slacktest.Server {
	return slacktest.New(t, slacktest.Config{BotToken: slackBotToken, AppToken: slackAppToken})
}

// botMessages are the bot's messages of a channel (not deleted).
func botMessages(sl *slacktest.Server, chat string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range sl.Messages(chat) {
		if m.Bot && !m.Deleted {
			out = append(out, m)
		}
	}
	return out
}

// TestE2ESlack: through the real binary over Socket Mode, a DM and a threaded channel
// mention are each answered once (the mention in its thread, the slow answer's "…" draft
// edited into it: a run that lasts past slack.ShowAfter is shown), a file a person shares is downloaded with the bot token and read by the
// agent, and a file the agent names goes up with Slack's external upload flow.
func TestE2ESlack(t *testing.T) {
	sl := newSlack(t)
	script := fake.NewScript()
	llm := &echoLLM{asked: map[string]int{}}
	script.Respond = func(req fake.Request) fake.Reply {
		last := lastUser(req)
		switch {
		case strings.Contains(last, "send me the report"):
			return fake.Reply{Text: "Here it is.\nMEDIA: report.txt"}
		case strings.Contains(last, "slowly"):
			return fake.Reply{Text: replyTo(tokenRE.FindString(last)), Delay: slack.ShowAfter + 2*time.Second}
		}
		llm.mu.Lock()
		defer llm.mu.Unlock()
		marks := tokenRE.FindAllString(last, -1)
		if len(marks) == 0 {
			return fake.Reply{Text: "ok"}
		}
		return fake.Reply{Text: replyTo(marks[len(marks)-1])}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	n, home := slackNode(t, sl, srv)

	sl.Post(slacktest.UserMessage{Channel: "D100", User: "U100", Text: "answer slowly " + tok("d", 1)})
	ts := sl.Post(slacktest.UserMessage{Channel: "C200", User: "U100", Text: "<@" + slacktest.DefaultBotUserID + "> answer " + tok("c", 1)})
	answeredOnce(t, n, sl.Sent, time.Minute, map[string]string{"D100": tok("d", 1), "C200": tok("c", 1)})
	if bot := botMessages(sl, "D100"); len(bot) != 1 || bot[0].Text != replyTo(tok("d", 1)) || bot[0].Edits == 0 {
		t.Errorf("the DM shows %+v, want one reply: the draft edited into the answer", bot)
	}
	// In a channel the conversation is the thread the mention started (reef shows no draft
	// inside threads).
	bot := botMessages(sl, "C200")
	if len(bot) != 1 || bot[0].ThreadTS != ts || bot[0].Text != replyTo(tok("c", 1)) {
		t.Errorf("the channel shows %+v, want one reply in thread %s", bot, ts)
	}

	sl.Post(slacktest.UserMessage{Channel: "D100", User: "U100", Text: "what does this say?",
		Files: []slacktest.FileSpec{{Name: "notes.txt", Mimetype: "text/plain", Data: []byte("the marker is " + tok("f", 1))}}})
	answeredOnce(t, n, sl.Sent, time.Minute, map[string]string{"D100": tok("f", 1)})

	if err := os.WriteFile(filepath.Join(home, "workspace", "report.txt"), []byte("quarterly numbers"), 0o644); err != nil {
		t.Fatal(err)
	}
	sl.Post(slacktest.UserMessage{Channel: "D100", User: "U100", Text: "send me the report"})
	if !eventually(time.Minute, func() bool { return len(sl.Uploads("D100")) == 1 }) {
		t.Fatalf("no upload; the DM shows %q; logs:\n%s", sl.Sent("D100"), tail(n.logs(), 6000))
	}
	if up := sl.Uploads("D100")[0]; up.Name != "report.txt" || string(up.Data) != "quarterly numbers" {
		t.Errorf("uploaded %q with %q", up.Name, up.Data)
	}
	n.stop()
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), slackBotToken, slackAppToken)
}

// TestE2ESlackKillDuringBurst: the crash harness on Slack's Socket Mode: reef is SIGKILLed
// twice while six DMs send their messages; every message is answered exactly once (envelopes
// are acknowledged only once stored, so Slack sends those a kill left again, and the dedup
// makes them harmless).
func TestE2ESlackKillDuringBurst(t *testing.T) {
	sl := newSlack(t)
	llm := newEchoLLM(t, 30*time.Millisecond, nil)
	n, home := slackNode(t, sl, llm.srv)
	var chats []string
	for i := range 6 {
		chats = append(chats, fmt.Sprintf("d%d", 8300+i)) // lower case: the markers carry it
	}
	killBurst(t, n, chats, 5, 2, func(chat, text string) {
		sl.Post(slacktest.UserMessage{Channel: chat, User: "U" + chat, Text: text})
	}, sl.Sent)
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), slackBotToken, slackAppToken)
	if sl.Lost() != 0 {
		t.Errorf("%d envelopes were never acknowledged", sl.Lost())
	}
}

// TestE2ESlackDisconnectMidBurst: Slack sends disconnect envelopes (refresh_requested,
// then link_disabled) in the middle of a burst; reef opens new connections and every message
// is answered exactly once.
func TestE2ESlackDisconnectMidBurst(t *testing.T) {
	sl := newSlack(t)
	llm := newEchoLLM(t, 30*time.Millisecond, nil)
	n, _ := slackNode(t, sl, llm.srv)
	want := map[string]string{}
	for i := range 40 {
		chat := fmt.Sprintf("d%d", 8400+i%8)
		switch i {
		case 13:
			sl.Disconnect("refresh_requested", time.Second)
		case 27:
			sl.Disconnect("link_disabled", 0)
		}
		want[chat] = tok(chat, i)
		sl.Post(slacktest.UserMessage{Channel: chat, User: "U" + chat, Text: "answer " + tok(chat, i)})
		if i%8 == 7 {
			answeredOnce(t, n, sl.Sent, time.Minute, want)
		}
	}
	for i := range 40 {
		chat := fmt.Sprintf("d%d", 8400+i%8)
		if c := countOf(sl.Sent(chat), replyTo(tok(chat, i))); c != 1 {
			t.Errorf("%s answered %d times", tok(chat, i), c)
		}
	}
	if sl.Connections() < 3 || sl.Lost() != 0 {
		t.Errorf("%d connections, %d envelopes lost; want 3 or more and none", sl.Connections(), sl.Lost())
	}
	n.stop()
}

// TestE2ESlackEventsOnWebListener: the Events API mode with no listener of its own: Slack's
// signed requests come to reef's web listener (no gateway token needed there, the signature
// is checked instead), and a DM and a channel mention are answered once.
func TestE2ESlackEventsOnWebListener(t *testing.T) {
	sl := newSlack(t)
	llm := newEchoLLM(t, 0, nil)
	addr := freeAddr(t)
	home, e := writeConfig(t, llm.srv, slackYAML(sl.APIURL)+"    mode: events\n    signingSecret: ${SLACK_SIGNING_SECRET}\n")
	e["SLACK_BOT_TOKEN"], e["SLACK_APP_TOKEN"], e["SLACK_SIGNING_SECRET"] = slackBotToken, slackAppToken, sl.Config().SigningSecret
	e["REEF_GATEWAY_LISTEN"] = addr
	n := newNode(t, e)
	url := "http://" + addr + "/slack/events"
	ready := func() bool {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"type":"url_verification","challenge":"x"}`))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized // listening, and refusing the unsigned request
	}
	if !eventually(30*time.Second, ready) {
		t.Fatalf("no events endpoint on the web listener; logs:\n%s", tail(n.logs(), 6000))
	}
	sl.SetEventsURL(url)
	sl.Post(slacktest.UserMessage{Channel: "d500", User: "U500", Text: "answer " + tok("e", 1)})
	sl.Post(slacktest.UserMessage{Channel: "C500", User: "U500", Text: "<@" + slacktest.DefaultBotUserID + "> answer " + tok("e", 2)})
	answeredOnce(t, n, sl.Sent, time.Minute, map[string]string{"d500": tok("e", 1), "C500": tok("e", 2)})
	n.stop()
	for chat, marker := range map[string]string{"d500": tok("e", 1), "C500": tok("e", 2)} {
		if c := countOf(sl.Sent(chat), replyTo(marker)); c != 1 {
			t.Errorf("%s answered %d times", marker, c)
		}
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), slackBotToken, sl.Config().SigningSecret)
}

// TestE2ESlackKilledAfterPost: reef is SIGKILLed the moment Slack has taken a reply's
// chat.postMessage, before reef hears the answer and so before the reply's outbox row is
// marked sent: first a quick DM answer (one message, no draft), then an answer in a channel
// thread. After each restart the reply is found on Slack by its metadata
// (conversations.history, conversations.replies) and not posted again.
func TestE2ESlackKilledAfterPost(t *testing.T) {
	var mu sync.Mutex
	var target string             // the text whose post reef does not live to hear about
	var landed chan chan struct{} // told when it lands; answered when reef is dead
	sl := slacktest.New(t, slacktest.Config{BotToken: slackBotToken, AppToken: slackAppToken,
		OnSend: func(_, _, text string) {
			mu.Lock()
			hit := target != "" && text == target
			if hit {
				target = ""
			}
			mu.Unlock()
			if hit {
				release := make(chan struct{})
				landed <- release
				<-release // the fake holds the answer until reef is gone
			}
		}})
	llm := newEchoLLM(t, 0, nil)
	n, home := slackNode(t, sl, llm.srv)

	// killAt kills reef when the answer to marker lands, starts it again, and has the
	// conversation go on (say): the chat's replies go out in order, so once the next answer
	// is there the one the kill left has been dealt with.
	killAt := func(chat, marker string, say func(text string)) {
		t.Helper()
		mu.Lock()
		target, landed = replyTo(marker), make(chan chan struct{}, 1)
		mu.Unlock()
		say("answer " + marker)
		select {
		case release := <-landed:
			n.kill()
			close(release)
		case <-time.After(time.Minute):
			t.Fatalf("the reply was not posted; logs:\n%s", tail(n.logs(), 6000))
		}
		n.start()
		say("answer " + marker + "0")
		answeredOnce(t, n, sl.Sent, time.Minute, map[string]string{chat: marker + "0"})
	}
	killAt("D700", tok("k", 1), func(text string) {
		sl.Post(slacktest.UserMessage{Channel: "D700", User: "U700", Text: text})
	})
	thread := sl.Post(slacktest.UserMessage{Channel: "C700", User: "U700", Text: "<@" + slacktest.DefaultBotUserID + "> hello"})
	if !eventually(time.Minute, func() bool { return len(botMessages(sl, "C700")) == 1 }) {
		t.Fatalf("no answer in the thread; logs:\n%s", tail(n.logs(), 6000))
	}
	killAt("C700", tok("k", 2), func(text string) {
		sl.Post(slacktest.UserMessage{Channel: "C700", ThreadTS: thread, User: "U700", Text: text})
	})
	n.stop()
	checkSettled(t, home)
	for chat, marker := range map[string]string{"D700": tok("k", 1), "C700": tok("k", 2)} {
		if c := countOf(sl.Sent(chat), replyTo(marker)); c != 1 {
			t.Errorf("%s answered %d times, want once; %s shows %q", marker, c, chat, sl.Sent(chat))
		}
	}
	for _, m := range botMessages(sl, "C700") {
		if m.ThreadTS != thread {
			t.Errorf("a reply outside the thread: %+v", m)
		}
	}
	if bot := botMessages(sl, "D700"); len(bot) != 2 || bot[0].Edits != 0 {
		t.Errorf("the DM shows %q (first edited %d times), want two replies, the quick one never edited (no draft)",
			sl.Sent("D700"), bot[0].Edits)
	}
	if sl.Calls("conversations.history") == 0 || sl.Calls("conversations.replies") == 0 {
		t.Errorf("reef did not look for the replies the kills left (history %d, replies %d)",
			sl.Calls("conversations.history"), sl.Calls("conversations.replies"))
	}
	noSecrets(t, home, n.logs(), slackBotToken, slackAppToken)
}

// TestE2ESlackApprovalButton: with buttons on (an app with Interactivity), an exec approval
// asked by a guest in a channel reaches the owner's DM with Approve / Deny buttons; the
// owner's press is taken as /approve, the command runs once, and the thread gets the answer.
func TestE2ESlackApprovalButton(t *testing.T) {
	sl := newSlack(t)
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
	y := fmt.Sprintf("channels:\n  slack:\n    botToken: ${SLACK_BOT_TOKEN}\n    appToken: ${SLACK_APP_TOKEN}\n    apiUrl: %s\n"+
		"    buttons: true\n    allowFrom: [\"U500\"]\n    groups: [\"C900\"]\n    groupTools:\n      C900: {allow: [exec]}\n", sl.APIURL)
	home, e := writeConfig(t, srv, y)
	e["SLACK_BOT_TOKEN"], e["SLACK_APP_TOKEN"] = slackBotToken, slackAppToken
	n := newNode(t, e)
	if !eventually(30*time.Second, func() bool { return sl.Connections() > 0 }) {
		t.Fatalf("the bot did not connect; logs:\n%s", tail(n.logs(), 8000))
	}
	sl.Post(slacktest.UserMessage{Channel: "D500", User: "U500", Text: "hi"})
	if !eventually(30*time.Second, func() bool { return slices.Contains(sl.Sent("D500"), "hello") }) {
		t.Fatalf("the owner got no answer: %q; logs:\n%s", sl.Sent("D500"), tail(n.logs(), 4000))
	}
	thread := sl.Post(slacktest.UserMessage{Channel: "C900", User: "U42", Text: "<@" + slacktest.DefaultBotUserID + "> run the thing"})
	var request slacktest.Message
	if !eventually(60*time.Second, func() bool {
		for _, m := range botMessages(sl, "D500") {
			if strings.Contains(m.Text, "Approval needed") {
				request = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no approval request reached the owner: %q; logs:\n%s", sl.Sent("D500"), tail(n.logs(), 4000))
	}
	if request.Blocks == nil {
		t.Fatalf("the request has no buttons: %+v", request)
	}
	ranFile := filepath.Join(home, "workspace", "ran.txt")
	if _, err := os.Stat(ranFile); err == nil {
		t.Fatal("the command ran before the owner approved it")
	}
	if err := sl.Press("D500", request.TS, "U500", "Approve once"); err != nil {
		t.Fatal(err)
	}
	if !eventually(60*time.Second, func() bool {
		return slices.ContainsFunc(botMessages(sl, "C900"), func(m slacktest.Message) bool {
			return strings.HasPrefix(m.Text, "ran it") && m.ThreadTS == thread
		})
	}) {
		t.Fatalf("the thread got no answer after the press: %q; owner %q; logs:\n%s", sl.Sent("C900"), sl.Sent("D500"), tail(n.logs(), 4000))
	}
	if b, err := os.ReadFile(ranFile); err != nil || string(b) != "ran\n" {
		t.Errorf("ran.txt = %q (%v), want the command run once", b, err)
	}
	n.stop()
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), slackBotToken, slackAppToken)
}
