package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestConfigEditInABrowser drives the Config page's editor in headless Chromium: the form
// switches the Telegram bot's streaming mode from progress to off, and the running gateway
// (the same process) shows the owner's next run without a draft; an invalid edit in the
// YAML editor is refused inline and changes nothing. Screenshots go to the test's artifacts.
func TestConfigEditInABrowser(t *testing.T) {
	exe := chromium(t)
	script := fake.NewScript()
	script.Models = []string{"test-model"}
	script.Respond = fakeReply
	llm := openaitest.NewServer(script)
	t.Cleanup(llm.Close)
	tg := telegramtest.New(t)
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "# edited from the web UI in this test\nchannels:\n  telegram:\n    botToken: ${TG_TOKEN}\n    apiRoot: " + tg.URL +
		"\n    allowFrom: [\"77\"]\n    streaming:\n      progress:\n        startDelayMs: 0 # a draft at once\n"
	path := filepath.Join(home, "reef.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	e := withFake(home, llm)
	e["TG_TOKEN"] = telegramtest.Token // the recommended way: the file holds only the reference
	w := &webGateway{env: e, home: home, tg: tg, llm: llm}
	w.launch(t)
	pid := w.cmd.Process.Pid

	// Every answer is edited into a "…" draft (exactly once); under progress the draft shows
	// the run (its label, the ls line) before the answer.
	progressShownNow := func(m telegramtest.SentMessage) bool { // not yet the answer to ls
		return !strings.HasPrefix(m.Text, "Done.")
	}
	progressShown := func(m telegramtest.SentMessage) bool {
		for _, h := range m.History {
			if h != "…" && h != m.Text {
				return true
			}
		}
		return false
	}
	answered := func(ms []telegramtest.SentMessage, n int) bool { // n messages, the last one answered
		return len(ms) >= n && !progressShownNow(ms[len(ms)-1])
	}
	lastOf := func(n int) telegramtest.SentMessage {
		t.Helper()
		if !eventually(30*time.Second, func() bool { return answered(tg.Messages(77), n) }) {
			t.Fatalf("the owner got %d messages, want %d; logs:\n%s", len(tg.Messages(77)), n, tail(w.stderr.String(), 3000))
		}
		ms := tg.Messages(77)
		return ms[len(ms)-1]
	}
	tg.UserSays(77, 77, "ls")
	if m := lastOf(1); !progressShown(m) {
		t.Fatalf("no progress shown under streaming progress: %+v", m)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 1100), chromedp.UserDataDir(profileDir(t)))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		}
	})
	dir := t.ArtifactDir()
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		})
	}
	noSecret := chromedp.ActionFunc(func(ctx context.Context) error {
		var html string
		if err := chromedp.OuterHTML("html", &html).Do(ctx); err != nil {
			return err
		}
		if strings.Contains(html, canary) || strings.Contains(html, telegramtest.Token) {
			return fmt.Errorf("the page shows a secret")
		}
		return nil
	})
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\nlogs:\n%s", what, err, tail(w.stderr.String(), 3000))
		}
	}

	var saved string
	run("switch streaming off in the form",
		chromedp.Navigate(w.url+"/login"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", w.token, chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible(`nav`),
		chromedp.Navigate(w.url+"/config"),
		chromedp.Click("#edit-config", chromedp.ByID),
		chromedp.WaitVisible(`#settings-form`, chromedp.ByID),
		noSecret,
		shot("config-edit-1-form"),
		chromedp.SetValue(`#streaming-telegram`, "off", chromedp.ByID),
		chromedp.Click("#settings-save", chromedp.ByID),
		chromedp.WaitVisible(`#config-saved, #config-problems`, chromedp.ByQuery),
		chromedp.Text(`#config-saved, #config-problems`, &saved, chromedp.ByQuery),
		noSecret,
		shot("config-edit-2-saved"),
	)
	if !strings.Contains(saved, "channels.telegram changed") || strings.Contains(saved, "restart") {
		t.Errorf("the saved notice says %q", saved)
	}
	tg.UserSays(77, 77, "ls")
	n := len(tg.Messages(77))
	if m := lastOf(n + 1); progressShown(m) {
		t.Errorf("after streaming off the run's progress was shown: %q", m.History)
	}
	if w.cmd.Process.Pid != pid || strings.Count(w.stderr.String(), "reef gateway ready") != 1 {
		t.Error("the gateway restarted to apply the streaming mode")
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "mode: \"off\"") && !strings.Contains(string(data), "mode: off") ||
		!strings.Contains(string(data), "# a draft at once") {
		t.Errorf("reef.yaml after the form:\n%s", data)
	}
	if _, err := os.Stat(path + ".bak"); err != nil {
		t.Errorf("no backup of the old reef.yaml: %v", err)
	}

	var refused, text string
	run("an invalid edit is refused inline",
		chromedp.Value(`#config-yaml`, &text, chromedp.ByID),
		chromedp.ActionFunc(func(ctx context.Context) error {
			return chromedp.SetValue(`#config-yaml`, text+"frobnicate: true\n", chromedp.ByID).Do(ctx)
		}),
		chromedp.Click("#config-save", chromedp.ByID),
		chromedp.WaitVisible(`#config-problems`, chromedp.ByID),
		chromedp.Text(`#config-problems`, &refused, chromedp.ByID),
		noSecret,
		shot("config-edit-3-refused"),
	)
	if !strings.Contains(refused, `unknown key "frobnicate"`) {
		t.Errorf("the refusal says %q", refused)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("a refused edit changed reef.yaml:\n%s", after)
	}
	tg.UserSays(77, 77, "hello again")
	if !eventually(30*time.Second, func() bool { return len(tg.Sent(77)) >= n+2 }) {
		t.Errorf("no answer after the refused edit: %q", tg.Sent(77)) // the gateway answers on its configuration
	}
	// An invalid edit made on disk is found by the watcher, refused, and shown on the Overview.
	if err := os.WriteFile(path, append(data, []byte("    dmPolicy: sometimes\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	if !eventually(30*time.Second, func() bool { return strings.Contains(w.stderr.String(), "config reload refused") }) {
		t.Fatalf("the watcher did not refuse the edit:\n%s", tail(w.stderr.String(), 3000))
	}
	var overview string
	run("the Overview shows the refused reload",
		chromedp.Navigate(w.url+"/"),
		chromedp.WaitVisible(`#reload.refused`, chromedp.ByQuery),
		chromedp.Text(`#reload`, &overview, chromedp.ByID),
		shot("config-edit-4-overview-refused"),
	)
	if !strings.Contains(overview, "Config reload refused") || !strings.Contains(overview, "sometimes") {
		t.Errorf("the Overview says %q", overview)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("screenshots in %s", dir)
}
