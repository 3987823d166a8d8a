package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
	ledger "github.com/reefgw/reef/usage"
)

// startConsoleGateway is startWebGateway with a priced model, a model that reports its
// tokens, and a Telegram bot whose token the platform refuses (an error in the log).
func startConsoleGateway(t *testing.T) *webGateway {
	t.Helper()
	script := fake.NewScript()
	script.Models = []string{"test-model"}
	script.Respond = func(r fake.Request) fake.Reply {
		rep := fakeReply(r)
		rep.Usage = messages.Usage{InputTokens: 1200, OutputTokens: 300}
		return rep
	}
	llm := openaitest.NewServer(script)
	t.Cleanup(llm.Close)
	tg := telegramtest.New(t)
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := "channels:\n  telegram:\n    botToken: 999999:AAHrefusedByThePlatformInReefTestsX\n    apiRoot: " + tg.URL + "\n" +
		"models:\n  openai/test-model:\n    cost: {input: 2, output: 8}\n"
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &webGateway{env: withFake(home, llm), home: home, tg: tg, llm: llm}
	w.launch(t)
	return w
}

// TestControlUIConsoleInABrowser drives the management pages in headless Chromium: a cron
// job added from the form fires, the log viewer filters the refused bot's error, and the
// usage page charts a few turns with their cost; reef usage prints the same numbers. Each
// page is screenshot at desktop and phone width into the test's artifact directory.
func TestControlUIConsoleInABrowser(t *testing.T) {
	exe := chromium(t)
	w := startConsoleGateway(t)
	for _, text := range []string{"hello", "ls", "what is this"} {
		if code, body := w.post(t, "/chat/send", "application/json", `{"text":"`+text+`"}`); code != 202 {
			t.Fatalf("chat send: %d %s", code, body)
		}
	}
	waitUsage(t, w, func(r ledger.Report) bool { return r.Total.OutputTokens >= 600 })

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900), chromedp.UserDataDir(profileDir(t)))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				problems = append(problems, fmt.Sprintf("console.error: %v", ev.Args))
			}
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
			for _, s := range []string{canary, w.token, "AAHrefusedByThePlatformInReefTestsX"} {
				if strings.Contains(html, s) {
					return fmt.Errorf("%s shows a secret (%.6s…)", page, s)
				}
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
		chromedp.Navigate(w.url+"/login"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", w.token, chromedp.ByID),
		chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible(`nav a[aria-current="page"]`),
	)

	at := time.Now().Add(20 * time.Second).UTC().Format(time.RFC3339)
	var preview string
	run("add a cron job from the form",
		chromedp.Navigate(w.url+"/cron"),
		chromedp.Click("#cron-add", chromedp.ByID),
		chromedp.WaitVisible("#cron-form", chromedp.ByID),
		chromedp.SendKeys(`input[name=name]`, "browser check"),
		chromedp.Click(`input[name=kind][value=at]`),
		chromedp.SendKeys(`input[name=at]`, at),
		chromedp.Click(`input[name=payload][value=agentTurn]`),
		chromedp.SendKeys(`textarea[name=text]`, "cron-from-the-browser"),
		chromedp.SetValue(`input[name=deliver]`, "none"),
		chromedp.WaitVisible(`//p[@id="cron-preview" and contains(., "next:")]`),
		chromedp.Text("#cron-preview", &preview, chromedp.ByID),
		shot("console-01-cron-form"),
		chromedp.Click("#cron-save", chromedp.ByID),
		chromedp.WaitVisible(`//dd[@class="human" and contains(., "once at")]`),
		shot("console-02-cron-job"),
	)
	if !strings.Contains(preview, "once at") || !strings.Contains(preview, "UTC") {
		t.Errorf("the form's preview says %q", preview)
	}
	fired := func() bool {
		for _, r := range w.llm.Script().Requests() {
			for _, m := range r.Messages {
				if m.Role == messages.RoleUser && strings.Contains(m.Content, "cron-from-the-browser") {
					return true
				}
			}
		}
		return false
	}
	for deadline := time.Now().Add(90 * time.Second); !fired(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cron job added from the form did not fire")
		}
	}

	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(w.stderr.String(), "fix the credentials"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the refused bot token logged no error:\n%s", w.stderr)
		}
	}
	run("the log viewer filters an error",
		chromedp.Navigate(w.url+"/logs"),
		chromedp.WaitVisible("#logs-filter", chromedp.ByID),
		chromedp.SetValue(`select[name=level]`, "error"),
		chromedp.SendKeys(`input[name=q]`, "credentials"),
		chromedp.Submit(`input[name=q]`),
		chromedp.WaitVisible(`//ol[@id="logs"]/li[contains(@class, "lvl-error") and contains(., "fix the credentials")]`),
		noSecret("logs"),
		shot("console-03-logs-error"),
	)
	var infos int
	run("only errors shown", chromedp.Evaluate(`document.querySelectorAll("#logs li:not(.lvl-error):not(.lvl-fatal)").length`, &infos))
	if infos != 0 {
		t.Errorf("filtered to errors, the log viewer still shows %d other lines", infos)
	}

	var total string
	var bars int
	run("the usage chart after a few turns",
		chromedp.Navigate(w.url+"/usage"),
		chromedp.WaitVisible(`figure.chart svg`),
		chromedp.Evaluate(`[...document.querySelectorAll("svg.chart rect.out")].filter(r => r.getAttribute("height") > 0).length`, &bars),
		chromedp.Text("#usage-total", &total, chromedp.ByID),
		noSecret("usage"),
		shot("console-04-usage"),
	)
	if bars < 1 {
		t.Error("the usage chart has no bar for today")
	}
	rep := waitUsage(t, w, func(ledger.Report) bool { return true })
	cost := fmt.Sprintf("%.4f", rep.Total.Cost)
	if !strings.Contains(total, cost) || rep.Total.Cost == 0 {
		t.Errorf("the usage page's total %q does not show the cost %s", total, cost)
	}
	if cli := reef(t, w.env, "", "usage", "-days", "14"); cli.code != 0 || !strings.Contains(cli.stdout, cost) ||
		!strings.Contains(cli.stdout, "openai/test-model") || !strings.Contains(cli.stdout, "webchat") {
		t.Errorf("reef usage (code %d) does not show the page's numbers (cost %s):\n%s%s", cli.code, cost, cli.stdout, cli.stderr)
	}

	var state string
	run("channels: the refused bot's state, pause and resume",
		chromedp.Navigate(w.url+"/channels"),
		chromedp.WaitVisible(`//table[@id="channels"]//tr[contains(., "telegram")]//td[contains(., "failed")]`),
		chromedp.Text(`//table[@id="channels"]//tr[contains(., "telegram")]/td[@class="state"]`, &state),
		noSecret("channels"),
		shot("console-09-channels"),
		chromedp.Click(`//table[@id="channels"]//tr[contains(., "webchat")]//button[. = "Pause"]`),
		chromedp.WaitVisible(`//table[@id="channels"]//tr[contains(., "webchat")]//td[contains(., "paused")]`),
		shot("console-10-channel-paused"),
		chromedp.Click(`//table[@id="channels"]//tr[contains(., "webchat")]//button[. = "Resume"]`),
		chromedp.WaitVisible(`//table[@id="channels"]//tr[contains(., "webchat")]//td[contains(., "connected")]`),
	)
	if !strings.Contains(state, "401") && !strings.Contains(state, "refused") {
		t.Errorf("the refused bot's state says no why: %q", state)
	}

	var title string
	run("sessions with titles, filtered by channel",
		chromedp.Navigate(w.url+"/sessions?channel=webchat"),
		chromedp.WaitVisible(`#sessions a.title`),
		chromedp.Text(`#sessions a.title`, &title),
		shot("console-11-sessions"),
	)
	if title != "hello" {
		t.Errorf("the webchat session's title is %q, want its first line", title)
	}

	run("live opens with the backlog, text folded per run",
		chromedp.Navigate(w.url+"/live?kind=text.delta"),
		chromedp.WaitVisible(`#live li.text-delta`),
		shot("console-12-live-backlog"),
	)

	run("the same pages on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(w.url+"/cron/edit"), chromedp.WaitVisible("#cron-form", chromedp.ByID), shot("console-05-phone-cron-form"),
		chromedp.Navigate(w.url+"/cron"), chromedp.WaitVisible("#cron", chromedp.ByID), shot("console-06-phone-cron"),
		chromedp.Navigate(w.url+"/logs?level=warn"), chromedp.WaitVisible("#logs", chromedp.ByID), shot("console-07-phone-logs"),
		chromedp.Navigate(w.url+"/usage"), chromedp.WaitVisible(`figure.chart svg`), shot("console-08-phone-usage"),
		chromedp.Navigate(w.url+"/sessions"), chromedp.WaitVisible(`#sessions`), shot("console-13-phone-sessions"),
		chromedp.Navigate(w.url+"/channels"), chromedp.WaitVisible(`#channels`), shot("console-14-phone-channels"),
	)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("screenshots in %s", dir)
}

// waitUsage polls the usage page's JSON until ok accepts it.
func waitUsage(t *testing.T, w *webGateway, ok func(ledger.Report) bool) ledger.Report {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, body := w.get(t, "/usage?days=14&format=json")
		var rep ledger.Report
		if code == 200 && json.Unmarshal([]byte(body), &rep) == nil && ok(rep) {
			return rep
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage never became as expected: %d %s", code, body)
		}
	}
}
