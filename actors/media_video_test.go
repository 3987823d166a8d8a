package actors_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence/memory"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// TestTelegramVideoBothWays: on the Telegram wire fake, a video is saved in the inbox and
// the agent is told its path, size and type; a video over media.maxMB.video is not
// downloaded and the agent gets its name, size and type; a GIF (an animation) is saved as a
// video; a reply's MEDIA: clip.mp4 goes out by sendVideo.
func TestTelegramVideoBothWays(t *testing.T) {
	tg := telegramtest.New(t)
	sent := sentTo(tg, 20)
	bot := telegramBot(t, tg)
	ws := t.TempDir()
	clip := append([]byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte{7}, 600)...)
	os.WriteFile(filepath.Join(ws, "clip.mp4"), clip, 0o644)
	script := fakellm.NewScript(
		fakellm.Reply{Text: "Nice video. Here is mine:\nMEDIA: clip.mp4"},
		fakellm.Reply{Text: "Too long for me."},
		fakellm.Reply{Text: "Funny."},
	)
	reg, _ := tools.NewRegistry()
	ag := &actors.Agent{ID: "main", Workspace: ws, Model: "fake/m", Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000}
	rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: memory.New(), Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"telegram": bot},
		Media:    actors.MediaSettings{Limits: media.Limits{Video: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(10 * time.Second) })
	answer := func() telegramtest.SentMessage {
		t.Helper()
		for {
			if m := testutil.Receive(t, sent); m.Text != "…" {
				return m
			}
		}
	}
	told := func() string { // what the model was told last
		t.Helper()
		reqs := script.Requests()
		msgs := reqs[len(reqs)-1].Messages
		return msgs[len(msgs)-1].Content
	}

	mine := append([]byte("\x00\x00\x00\x18ftypisom"), bytes.Repeat([]byte{1}, 2000)...)
	tg.UserSendsVideo(4, 4, "holiday.mp4", mine, 0)
	if m := answer(); m.Text != "Nice video. Here is mine:" {
		t.Fatalf("answer %+v, want the text first", m)
	}
	if m := answer(); m.Kind != "video" || m.FileName != "clip.mp4" || !bytes.Equal(m.File, clip) {
		t.Errorf("then %s %q (%d bytes), want clip.mp4 by sendVideo", m.Kind, m.FileName, len(m.File))
	}
	saved, _ := filepath.Glob(filepath.Join(ws, "inbox", "*", "*holiday.mp4"))
	if len(saved) != 1 {
		t.Fatalf("inbox holds %v, want the video", saved)
	}
	if data, _ := os.ReadFile(saved[0]); !bytes.Equal(data, mine) {
		t.Errorf("the saved video has %d bytes, want %d", len(data), len(mine))
	}
	if got := told(); !strings.Contains(got, "[video: inbox/") || !strings.Contains(got, "holiday.mp4 (2.0 KB, video/mp4)]") {
		t.Errorf("the model was told %q, want the saved path, size and type", got)
	}

	tg.UserSendsVideo(4, 4, "film.mp4", []byte("not held"), 300<<20)
	if m := answer(); m.Text != "Too long for me." {
		t.Fatalf("answer %+v", m)
	}
	if got := told(); !strings.Contains(got, "[video: film.mp4 (300.0 MB, video/mp4), not downloaded: 300.0 MB is over the 1.0 MB limit for video files]") {
		t.Errorf("the model was told %q, want the name, size, type and why it was not downloaded", got)
	}
	if n := tg.Downloads(); n != 1 {
		t.Errorf("%d downloads, want 1 (not the film over the cap)", n)
	}

	tg.UserSendsAnimation(4, 4, "dance.gif.mp4", clip)
	if m := answer(); m.Text != "Funny." {
		t.Fatalf("answer %+v", m)
	}
	if got := told(); !strings.Contains(got, "[video: inbox/") || !strings.Contains(got, "dance.gif.mp4") {
		t.Errorf("the model was told %q, want the animation saved as a video", got)
	}
}
