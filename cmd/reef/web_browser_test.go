package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium to drive: Debian's chromium, else Chrome. Without one the browser
// test skips, unless REEF_REQUIRE_CHROMIUM is set (.ci/run sets it after installing chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REEF_REQUIRE_CHROMIUM") != "" {
		t.Fatal("REEF_REQUIRE_CHROMIUM is set but no chromium is installed (apt-get install chromium)")
	}
	t.Skip("no chromium installed: the browser test of the web UI is skipped (apt-get install chromium to run it)")
	return ""
}

// TestWebUIInABrowser drives the Control UI and WebChat in headless Chromium: log in, chat
// with the fake model (a streamed answer and a progress line), reload and keep the history,
// approve a pairing request, open a conversation with a tool call and a sub-agent. Each page
// is screenshot into the test's artifact directory (go test -artifacts keeps them); any
// console error or exception fails the test.
func TestWebUIInABrowser(t *testing.T) {
	exe := chromium(t)
	w := startWebGateway(t)
	w.tg.UserSays(4242, 4242, "hello, may I talk to your bot?")
	waitSent(t, w.tg, 4242, 1) // the pairing code

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(profileDir(t)))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		var p string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				p = fmt.Sprintf("console.error: %v", ev.Args)
			}
		case *runtime.EventExceptionThrown:
			p = "exception: " + ev.ExceptionDetails.Error()
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				p = fmt.Sprintf("console: %s (%s)", ev.Entry.Text, ev.Entry.URL)
			}
		}
		if p != "" {
			mu.Lock()
			problems = append(problems, p)
			mu.Unlock()
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
	noSecret := func(page string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var html string
			if err := chromedp.OuterHTML("html", &html).Do(ctx); err != nil {
				return err
			}
			if strings.Contains(html, canary) {
				return fmt.Errorf("%s shows the API key", page)
			}
			return nil
		})
	}
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	run("log in",
		cdplog.Enable(),
		chromedp.Navigate(w.url+"/login"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		shot("01-login"),
		chromedp.SendKeys("#token", w.token, chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible(`nav a[aria-current="page"]`),
		chromedp.WaitVisible(`//td[contains(., "telegram")]`),
		noSecret("overview"),
		shot("02-overview"),
	)

	var streamed, answer string
	run("chat",
		chromedp.Navigate(w.url+"/chat"),
		chromedp.WaitVisible("#chat-input", chromedp.ByID),
		chromedp.SendKeys("#chat-input", "ls", chromedp.ByID),
		chromedp.Click("#chat-send", chromedp.ByID),
		chromedp.WaitVisible(`#messages details.steps summary`), // the run's steps, folded inside the answer
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "assistant") and not(contains(@class, "streaming"))]/div[@class="md" and starts-with(., "Done.")]`),
		chromedp.Click(`#messages details.steps summary`),
		chromedp.WaitVisible(`#messages li.progress`),
		chromedp.AttributeValue("#messages", "data-streamed", &streamed, nil, chromedp.ByID),
		chromedp.Text(`#messages li.progress`, &answer),
		shot("03-chat"),
	)
	if streamed != "yes" {
		t.Errorf("the answer was not streamed to the page (data-streamed=%q)", streamed)
	}
	if !strings.Contains(answer, "ls") {
		t.Errorf("progress line %q does not name the tool", answer)
	}

	var live, history string
	run("a command answered in the chat",
		chromedp.SendKeys("#chat-input", "/status", chromedp.ByID),
		chromedp.Click("#chat-send", chromedp.ByID),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "assistant")]/div[@class="md" and starts-with(., "Session: ")]`),
		chromedp.TextContent("#messages", &live, chromedp.ByID), // folded steps included
	)
	run("reload keeps the history",
		chromedp.Reload(),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "user") and . = "ls"]`),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "assistant")]/div[@class="md" and starts-with(., "Done.")]`),
		chromedp.TextContent("#messages", &history, chromedp.ByID),
		shot("04-chat-reloaded"),
	)
	if history != live { // the same list as before the reload: the /status exchange stays
		t.Errorf("the reloaded history differs from what the page showed:\n%s\nbefore the reload:\n%s", history, live)
	}
	if !strings.Contains(history, "ls .") {
		t.Errorf("the reloaded history lacks the progress line:\n%s", history)
	}
	if !strings.Contains(history, strings.TrimSpace(answer)) || !strings.Contains(answer, "ls .") {
		t.Errorf("the reloaded history lacks the live progress line %q (the tool with its argument):\n%s", answer, history)
	}

	run("delegate to a sub-agent",
		chromedp.SendKeys("#chat-input", "delegate count the files", chromedp.ByID),
		chromedp.Click("#chat-send", chromedp.ByID),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "assistant")]/div[@class="md" and starts-with(., "Your sub-agent finished")]`),
		shot("05-chat-subagent"),
	)

	run("approve the pairing request",
		chromedp.Navigate(w.url+"/pairing"),
		chromedp.WaitVisible(`//td[contains(., "4242")]`),
		shot("06-pairing"),
		chromedp.Click(`#pairing button.approve`),
		chromedp.WaitVisible(`#pairing tr.empty`),
		shot("07-pairing-approved"),
	)
	if st := reef(t, w.env, "", "pairing", "list"); !strings.Contains(st.stdout, "no pending pairing") {
		t.Errorf("after approving in the browser, reef pairing list says:\n%s", st.stdout)
	}

	var childKey string
	run("conversation view with a tool call and a sub-agent",
		chromedp.Navigate(w.url+"/sessions"),
		chromedp.WaitVisible(`//a[contains(., "webchat")]`),
		noSecret("sessions"),
		shot("08-sessions"),
		chromedp.Click(`//table[@id="sessions"]//a[contains(., "agent:main:webchat")]`),
		chromedp.WaitVisible(`details.toolcall summary`),
		chromedp.Click(`details.toolcall summary`),
		chromedp.WaitVisible(`details.toolcall[open] pre.result`),
		chromedp.WaitVisible(`a.subagent`),
		chromedp.AttributeValue(`a.subagent`, "href", &childKey, nil),
		noSecret("conversation"),
		shot("09-conversation"),
		chromedp.Click(`a.subagent`),
		chromedp.WaitVisible(`//h1[contains(., "subagent")]`),
		chromedp.WaitVisible(`//p[contains(., "Sub-agent of")]`),
		shot("10-subagent"),
	)
	if !regexp.MustCompile(`subagent`).MatchString(childKey) {
		t.Errorf("sub-agent link %q", childKey)
	}

	run("live events",
		chromedp.Navigate(w.url+"/live"),
		chromedp.WaitVisible(`//p[@id="live-state" and starts-with(., "following")]`),
		chromedp.ActionFunc(func(context.Context) error {
			if code, body := w.post(t, "/chat/send", "application/json", `{"text":"hello there"}`); code != 202 {
				return fmt.Errorf("chat send: %d %s", code, body)
			}
			return nil
		}),
		chromedp.WaitVisible(`#live li.run-end`),
		shot("11-live"),
	)

	run("cron and config",
		chromedp.Navigate(w.url+"/cron"),
		chromedp.WaitVisible(`#cron`),
		shot("12-cron"),
		chromedp.Navigate(w.url+"/config"),
		chromedp.WaitVisible(`pre.config`),
		noSecret("config"),
		shot("13-config"),
	)

	var probe string
	run("check providers",
		chromedp.Click(`#check-providers`, chromedp.ByID),
		chromedp.WaitVisible(`#providers tbody tr`),
		chromedp.Text(`#providers tbody`, &probe, chromedp.ByQuery),
		noSecret("config with the providers checked"),
		shot("13b-config-providers"),
	)
	if !strings.Contains(probe, "openai") || !strings.Contains(probe, "reachable") || !strings.Contains(probe, "ms") {
		t.Errorf("the provider check shows:\n%s", probe)
	}

	run("readable on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(w.url+"/"),
		chromedp.WaitVisible(`nav`),
		shot("14-phone-overview"),
		chromedp.Navigate(w.url+"/chat"),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "assistant")]`),
		shot("15-phone-chat"),
	)

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("screenshots in %s", dir)
}

// profileDir is a directory for Chromium's profile, removed after the test once Chromium's
// helper processes, which can outlive the browser's exit by a moment on a loaded machine, stop
// writing to it (t.TempDir's cleanup failed the test on "directory not empty").
func profileDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "reef-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Logf("chromium's profile %s is left behind: %v", dir, err)
				return
			}
		}
	})
	return dir
}
