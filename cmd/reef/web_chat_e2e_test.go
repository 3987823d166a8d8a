package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestHostileTextIsShownAsText: a guest's message through Telegram with script, style and
// event-attribute payloads, answered verbatim by the fake model, is shown on the Sessions
// page and in WebChat's history as text: no element or attribute of it reaches the page,
// while its Markdown renders.
func TestHostileTextIsShownAsText(t *testing.T) {
	w := startWebGateway(t)
	w.tg.UserSays(4343, 4343, "hi")
	pair := regexp.MustCompile(`approve telegram ([A-Z0-9]{8})`).FindStringSubmatch(waitSent(t, w.tg, 4343, 1)[0])
	if pair == nil {
		t.Fatal("no pairing code")
	}
	if code, body := w.post(t, "/pairing/approve", "application/x-www-form-urlencoded", "channel=telegram&code="+pair[1]); code != 200 {
		t.Fatalf("approve: %d %s", code, body)
	}
	w.tg.UserSays(4343, 4343, "say "+hostileText)
	waitUntil(t, "the answer on Telegram", func() bool { return strings.Contains(strings.Join(w.tg.Sent(4343), "\n"), "bold") })
	code, page := w.get(t, "/sessions/view?key=agent:main:telegram:direct:4343")
	if code != 200 {
		t.Fatalf("sessions view: %d", code)
	}
	checkNoPlanted(t, "the Telegram conversation's page", page)
	if !strings.Contains(page, "<strong>bold</strong>") {
		t.Error("the answer's Markdown is not rendered on the Sessions page")
	}

	if code, body := w.post(t, "/chat/send", "application/json", `{"chat":"owner","text":"say `+strings.ReplaceAll(hostileText, `"`, `\"`)+`"}`); code != 202 {
		t.Fatalf("chat send: %d %s", code, body)
	}
	var h struct {
		Items []struct{ Kind, Text, HTML string }
	}
	waitUntil(t, "the WebChat answer", func() bool {
		_, body := w.get(t, "/chat/history?c=owner")
		json.Unmarshal([]byte(body), &h)
		return len(h.Items) >= 2 && h.Items[len(h.Items)-1].Kind == "assistant"
	})
	last := h.Items[len(h.Items)-1]
	checkNoPlanted(t, "WebChat's answer", last.HTML)
	if !strings.Contains(last.HTML, "<strong>bold</strong>") || !strings.Contains(last.HTML, "&lt;script&gt;") {
		t.Errorf("WebChat's answer html %q", last.HTML)
	}
}

// checkNoPlanted fails when html holds markup from hostileText.
func checkNoPlanted(t *testing.T, where, html string) {
	t.Helper()
	lower := strings.ToLower(html)
	for _, bad := range []string{`<script>document`, "<img", "<style>body", "<svg", "onerror=\"", "onload=\"", `href="javascript`} {
		if strings.Contains(lower, bad) {
			t.Errorf("%s holds %q", where, bad)
		}
	}
}
