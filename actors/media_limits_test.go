package actors_test

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// TestTelegramFileOverTwentyMB: a 30 MB video (under reef's 50 MB cap for videos, over the
// 20 MB a Telegram bot may download) is not fetched at all: getFile is not called (it would
// refuse, three times), and the agent is told plainly why, in words it can pass on (#33
// point 4).
func TestTelegramFileOverTwentyMB(t *testing.T) {
	tg := telegramtest.New(t)
	bot := telegramBot(t, tg)
	script := fakellm.NewScript(fakellm.Reply{Text: "Too big to fetch."})
	reg, _ := tools.NewRegistry()
	ag := &actors.Agent{ID: "main", Workspace: t.TempDir(), Model: "fake/m", Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000}
	startAgent(t, ag, "telegram", bot, nil)
	tg.UserSendsVideo(5, 5, "holiday.mp4", []byte("stand-in"), 30<<20)
	until(t, "the answer", func() bool {
		for _, m := range tg.Messages(5) {
			if m.Text == "Too big to fetch." {
				return true
			}
		}
		return false
	})
	reqs := script.Requests()
	var body strings.Builder
	for _, m := range reqs[len(reqs)-1].Messages {
		body.WriteString(m.Content)
	}
	if !strings.Contains(body.String(), "holiday.mp4 (30.0 MB") || !strings.Contains(body.String(), "Telegram lets bots download files up to 20.0 MB") {
		t.Errorf("the model was told:\n%s\nwant the name, the size and Telegram's 20 MB limit", body.String())
	}
	if n := tg.Calls("getFile"); n != 0 {
		t.Errorf("getFile called %d times, want none for a file over Telegram's limit", n)
	}
}
