package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2EDiscordThreeLargeCharts: through the real binary and the fakes, the agent answers
// with three 9 MB charts (27 MB: over Discord's 25 MiB a request) and a 12 MB one (over the
// 10 MiB a bot may attach). The three arrive, spread over requests Discord takes; the fourth is
// named in a note; and the conversation goes on: the next message is answered (#33).
func TestE2EDiscordThreeLargeCharts(t *testing.T) {
	const token = "discord-canary-token.charts.K5"
	dc := discordtest.New(t, discordtest.Config{Token: token})
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		if strings.Contains(lastUser(req), "thanks") {
			return fake.Reply{Text: "You are welcome."}
		}
		return fake.Reply{Text: "Here are the charts.\nMEDIA: chart1.png\nMEDIA: chart2.png\nMEDIA: chart3.png\nMEDIA: huge.png"}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	home, e := writeConfig(t, srv, discordYAML(token, dc.URL))
	charts := map[string][]byte{}
	for i := range 3 {
		name := fmt.Sprintf("chart%d.png", i+1)
		charts[name] = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{byte(i + 1)}, 9_000_000-8)...)
	}
	huge := bytes.Repeat([]byte{9}, 12_000_000)
	ws := filepath.Join(home, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range charts {
		if err := os.WriteFile(filepath.Join(ws, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ws, "huge.png"), huge, 0o644)
	n := newNode(t, e)
	if !eventually(30*time.Second, dc.Connected) {
		t.Fatalf("the bot did not connect; logs:\n%s", tail(n.logs(), 8000))
	}
	dc.UserSays(t, "8200", "9200", "send me the charts")
	got := map[string][]byte{}
	files := func() bool {
		for _, m := range dc.SentMessages("8200") {
			for name, data := range dc.Files(m.ID) {
				got[name] = data
			}
		}
		return len(got) == 3
	}
	if !eventually(60*time.Second, files) {
		t.Fatalf("the bot attached %d of the 3 charts; channel shows %q; logs:\n%s", len(got), dc.Sent("8200"), tail(n.logs(), 6000))
	}
	for name, data := range charts {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s arrived with %d bytes, want %d", name, len(got[name]), len(data))
		}
	}
	note := func() bool {
		return slices.ContainsFunc(dc.Sent("8200"), func(s string) bool { return strings.Contains(s, "huge.png not sent") })
	}
	if !eventually(30*time.Second, note) {
		t.Errorf("no note on huge.png; channel shows %q", dc.Sent("8200"))
	}
	dc.UserSays(t, "8200", "9200", "thanks")
	if !eventually(30*time.Second, func() bool { return slices.Contains(dc.Sent("8200"), "You are welcome.") }) {
		t.Fatalf("the conversation did not go on; channel shows %q; logs:\n%s", dc.Sent("8200"), tail(n.logs(), 6000))
	}
	n.stop()
	if c := strings.Count(strings.Join(dc.Sent("8200"), "\n"), "Here are the charts."); c != 1 {
		t.Errorf("the reply's text was posted %d times, want once", c)
	}
	checkSettled(t, home)
	noSecrets(t, home, n.logs(), token, canary)
}
