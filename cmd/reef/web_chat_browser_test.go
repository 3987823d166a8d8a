package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
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

// browser is a headless Chromium logged in to a webGateway, collecting console problems.
type browser struct {
	t        *testing.T
	w        *webGateway
	ctx      context.Context
	dir      string
	mu       sync.Mutex
	problems []string
}

func newBrowser(t *testing.T, w *webGateway) *browser {
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(profileDir(t)))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(cancel)
	b := &browser{t: t, w: w, ctx: ctx, dir: t.ArtifactDir()}
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
			b.mu.Lock()
			b.problems = append(b.problems, p)
			b.mu.Unlock()
		}
	})
	t.Cleanup(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Error(p)
		}
		t.Logf("screenshots in %s", b.dir)
	})
	b.run("log in", cdplog.Enable(), chromedp.Navigate(w.url+"/login"), chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", w.token, chromedp.ByID), chromedp.Click("#login", chromedp.ByID),
		chromedp.WaitVisible(`nav a[aria-current="page"]`))
	return b
}

func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// shot writes a full-page screenshot into the test's artifact directory.
func (b *browser) shot(name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var img []byte
		if err := chromedp.FullScreenshot(&img, 100).Do(ctx); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(b.dir, name+".png"), img, 0o644)
	})
}

// noMarkup fails when the page holds an element a hostile text could have planted, or a
// script changed the title.
func (b *browser) noMarkup(where string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var n int
		var title, html string
		if err := chromedp.Evaluate(`document.querySelectorAll("main img, main script:not([src]), main style, main iframe, main svg, main [onerror], main [onclick], main a[href^='javascript']").length`, &n).Do(ctx); err != nil {
			return err
		}
		if err := chromedp.Title(&title).Do(ctx); err != nil {
			return err
		}
		if err := chromedp.OuterHTML("html", &html).Do(ctx); err != nil {
			return err
		}
		switch {
		case n > 0:
			return fmt.Errorf("%s: %d planted elements on the page", where, n)
		case strings.Contains(title, "pwned"):
			return fmt.Errorf("%s: a planted script ran (title %q)", where, title)
		case strings.Contains(html, canary):
			return fmt.Errorf("%s shows the API key", where)
		}
		return nil
	})
}

// pngFile writes a small PNG picture and returns its path.
func pngFile(t *testing.T) string {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for i := range 16 {
		img.Set(i, i, color.RGBA{R: 200, A: 255})
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	p := filepath.Join(t.TempDir(), "red-line.png")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hostileText is a message a guest could send through Telegram: script, style, event
// attributes and a script URL, with some Markdown that should render.
const hostileText = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'">` +
	`<style>body{display:none}</style> **bold** [x](javascript:document.title='pwned') <svg onload="document.title='pwned'">`

// answerMD is the XPath of the assistant answer whose rendered text starts with prefix.
func answerMD(prefix string) string {
	return `//ol[@id="messages"]/li[contains(@class, "assistant") and not(contains(@class, "streaming"))]/div[@class="md" and starts-with(normalize-space(.), '` + prefix + `')]`
}

// setInput puts text (newlines included) into the composer and sends it.
func setInput(text string) chromedp.Tasks {
	return chromedp.Tasks{chromedp.SetValue("#chat-input", text, chromedp.ByID), chromedp.Click("#chat-send", chromedp.ByID)}
}

// TestWebChatInABrowser drives WebChat in headless Chromium: the empty state, a Markdown
// answer with a code block and its copy button, two conversations kept apart, Stop during a
// slow tool, the thinking picker, an image upload that reaches the model as an image, a
// guest's hostile Telegram message shown safely in Sessions and in WebChat, and a session
// continued from Sessions. Every page is screenshot at desktop and phone width.
func TestWebChatInABrowser(t *testing.T) {
	w := startWebGateway(t)
	b := newBrowser(t, w)

	b.run("the empty state",
		chromedp.Navigate(w.url+"/chat"),
		chromedp.WaitVisible("#chat-empty", chromedp.ByID),
		chromedp.WaitVisible(`button.starter`),
		b.shot("chat-01-empty-desktop"),
	)
	var code, copied string
	b.run("a Markdown answer with a code block",
		setInput("say Here is **Go**:\n\n```go\nfmt.Println(\"<hi>\")\n```\n\n- one\n- two"),
		chromedp.WaitVisible(answerMD("Here is Go")),
		chromedp.WaitVisible(`#messages .md strong`),
		chromedp.WaitVisible(`#messages .md ul li`),
		chromedp.Text(`#messages .md pre code.language-go`, &code),
		chromedp.Click(`#messages .md button.copy`),
		chromedp.WaitVisible(`//button[contains(@class, "copy") and (. = "Copied" or . = "Select and copy")]`),
		chromedp.Text(`#messages .md button.copy`, &copied),
		chromedp.WaitNotVisible("#chat-empty", chromedp.ByID),
		b.shot("chat-02-markdown-desktop"),
	)
	if code != `fmt.Println("<hi>")` {
		t.Errorf("code block %q", code)
	}
	first := chatOfPage(t, b)

	var items int
	b.run("a second conversation",
		chromedp.Click("#chat-new", chromedp.ByID),
		chromedp.WaitVisible("#chat-empty", chromedp.ByID),
		setInput("ls"),
		chromedp.WaitVisible(answerMD("Done.")),
		chromedp.Click(`#messages details.steps summary`),
		chromedp.WaitVisible(`#messages details.steps li.progress`),
		chromedp.Reload(), // the new conversation is now in the list, named by its first message
		chromedp.WaitVisible(`//ul[@id="chat-list"]/li[contains(@class, "current")]/a[. = "ls"]`),
		chromedp.Evaluate(`document.querySelectorAll("#chat-list li").length`, &items),
		b.shot("chat-03-two-conversations-desktop"),
	)
	if items != 2 {
		t.Errorf("%d conversations listed, want 2", items)
	}
	second := chatOfPage(t, b)
	if first == second {
		t.Fatalf("the new chat is the first one (%s)", first)
	}
	var other string
	b.run("the first conversation is apart",
		chromedp.Click(`#chat-list a[data-chat="`+first+`"]`),
		chromedp.WaitVisible(answerMD("Here is Go")),
		chromedp.TextContent("#messages", &other, chromedp.ByID),
	)
	if strings.Contains(other, "ls .") {
		t.Errorf("the first conversation shows the second's run:\n%s", other)
	}

	start := time.Now()
	b.run("Stop during a slow tool",
		chromedp.Navigate(w.url+"/chat?c="+second),
		chromedp.WaitVisible(answerMD("Done.")),
		setInput("exec sleep 60"),
		chromedp.WaitVisible("#chat-stop", chromedp.ByID),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[last()]//summary[. = "1 step"]`),
		b.shot("chat-04-running-desktop"),
		chromedp.Click("#chat-stop", chromedp.ByID),
		chromedp.WaitVisible(answerMD("Stopped")),
		chromedp.WaitNotVisible("#chat-stop", chromedp.ByID),
		b.shot("chat-05-stopped-desktop"),
	)
	if d := time.Since(start); d > 50*time.Second {
		t.Errorf("the stop took %v: the 60 s tool was not stopped", d)
	}

	b.run("the thinking picker",
		chromedp.Evaluate(`(() => { const s = document.getElementById("chat-think"); s.value = "high"; s.dispatchEvent(new Event("change")); })()`, nil),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "user") and . = "/think high"]`),
	)
	waitUntil(t, "the /think command's effect", func() bool {
		_, lines := w.chatHistoryOf(t, second)
		return len(lines) > 0 && strings.Contains(strings.Join(lines, "\n"), "user: /think high")
	})
	var think string
	b.run("the picker shows the conversation's setting",
		chromedp.Reload(),
		chromedp.WaitVisible("#chat-think", chromedp.ByID),
		chromedp.Value("#chat-think", &think, chromedp.ByID),
	)
	if think != "high" {
		t.Errorf("after /think high from the picker, the page shows %q", think)
	}

	b.run("an image upload",
		chromedp.SetUploadFiles("#chat-file", []string{pngFile(t)}, chromedp.ByID),
		chromedp.WaitVisible(`//p[@id="chat-files" and contains(., "red-line.png")]`),
		setInput("what is in this picture?"),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[contains(@class, "user") and contains(., "red-line.png")]`),
		chromedp.WaitVisible(answerMD(`You said: "what is in this picture?`)),
		b.shot("chat-06-image-desktop"),
	)
	var sawImage bool
	for _, r := range w.llm.Script().Requests() {
		if bytes.Contains(r.Body, []byte(`data:image/png;base64,`)) && bytes.Contains(r.Body, []byte("what is in this picture?")) {
			sawImage = true
		}
	}
	if !sawImage {
		t.Error("the uploaded image did not reach the model as an image")
	}

	// A guest's hostile message through Telegram (paired first), answered verbatim by the fake.
	w.tg.UserSays(4343, 4343, "hi")
	notice := waitSent(t, w.tg, 4343, 1)[0]
	pair := regexp.MustCompile(`approve telegram ([A-Z0-9]{8})`).FindStringSubmatch(notice)
	if pair == nil {
		t.Fatalf("no pairing code in %q", notice)
	}
	if code, body := w.post(t, "/pairing/approve", "application/x-www-form-urlencoded", "channel=telegram&code="+pair[1]); code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	w.tg.UserSays(4343, 4343, "say "+hostileText)
	waitUntil(t, "the hostile text's answer on Telegram", func() bool { return strings.Contains(strings.Join(w.tg.Sent(4343), "\n"), "bold") })
	b.run("a hostile Telegram message in Sessions",
		chromedp.Navigate(w.url+"/sessions/view?key=agent:main:telegram:direct:4343"),
		chromedp.WaitVisible(`//div[@class="md"]/p/strong[. = "bold"]`),
		b.noMarkup("the Telegram conversation"),
		b.shot("chat-07-hostile-telegram-session-desktop"),
	)
	b.run("a hostile message in WebChat",
		chromedp.Navigate(w.url+"/chat?c="+first),
		chromedp.WaitVisible(answerMD("Here is Go")),
		setInput("say "+hostileText),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[last()]/div[@class="md"]/p/strong[. = "bold"]`),
		b.noMarkup("WebChat live"),
		chromedp.Reload(),
		chromedp.WaitVisible(`//ol[@id="messages"]/li[last()]/div[@class="md"]/p/strong[. = "bold"]`),
		b.noMarkup("WebChat history"),
	)

	var continued string
	b.run("a session continued from Sessions",
		chromedp.Navigate(w.url+"/sessions/view?key=agent:main:webchat:direct:"+second),
		chromedp.WaitVisible(`a.continue`),
		b.shot("chat-08-session-desktop"),
		chromedp.Click(`a.continue`),
		chromedp.WaitVisible(answerMD("You said")),
		setInput("say continued here"),
		chromedp.WaitVisible(answerMD("continued here")),
		chromedp.Location(&continued),
	)
	if !strings.HasSuffix(continued, "/chat?c="+second) {
		t.Errorf("continue led to %s", continued)
	}

	b.run("phone width",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(w.url+"/chat?c="+first),
		chromedp.WaitVisible(answerMD("Here is Go")),
		b.shot("chat-09-markdown-phone"),
		chromedp.Navigate(w.url+"/chat?c="+second),
		chromedp.WaitVisible(answerMD("continued here")),
		b.shot("chat-10-conversation-phone"),
		chromedp.Click("#chat-new", chromedp.ByID),
		chromedp.WaitVisible("#chat-empty", chromedp.ByID),
		b.shot("chat-11-empty-phone"),
		chromedp.Navigate(w.url+"/sessions/view?key=agent:main:telegram:direct:4343"),
		chromedp.WaitVisible(`div.md`),
		b.shot("chat-12-session-phone"),
	)
}

// chatOfPage is the chat id of the conversation the page shows.
func chatOfPage(t *testing.T, b *browser) string {
	var id string
	b.run("read the chat id", chromedp.AttributeValue("#webchat", "data-chat", &id, nil, chromedp.ByID))
	if id == "" {
		t.Fatal("no chat id on the page")
	}
	return id
}
