package actors_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence/memory"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/tools"
)

// mediaRig runs ch with a vision model that answers "seen" with MEDIA: chart.png, a file of
// its workspace. It returns the script (to read what the model got) and the workspace.
func mediaRig(t *testing.T, name string, ch channels.Channel) (*fakellm.Script, string, []byte) {
	t.Helper()
	ws := t.TempDir()
	chart := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{8}, 200)...)
	os.WriteFile(filepath.Join(ws, "chart.png"), chart, 0o644)
	script := fakellm.NewScript()
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "seen\nMEDIA: chart.png"} }
	reg, _ := tools.NewRegistry()
	ag := &actors.Agent{ID: "main", Workspace: ws, Model: "fake/m", Vision: true, Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000}
	rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: memory.New(), Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{name: ch}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(10 * time.Second) })
	return script, ws, chart
}

// checkImageReached checks that the last model request carried photo as image input and
// that the workspace's inbox holds it.
func checkImageReached(t *testing.T, script *fakellm.Script, ws string, photo []byte) {
	t.Helper()
	reqs := script.Requests()
	var got []byte
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, md := range m.Media {
			got = append(got, md.Data...)
		}
	}
	if !bytes.Equal(got, photo) {
		t.Errorf("the model got %d image bytes, want the photo's %d", len(got), len(photo))
	}
	saved, _ := filepath.Glob(filepath.Join(ws, "inbox", "*", "*"))
	if len(saved) != 1 {
		t.Errorf("inbox holds %v, want the photo", saved)
	}
}

// TestDiscordMediaBothWays: an image attachment is downloaded through the SSRF guard (opened
// for loopback, as tools.web.allowPrivate would) and reaches the vision model; the answer's
// MEDIA: chart.png arrives as an attachment.
func TestDiscordMediaBothWays(t *testing.T) {
	srv := discordtest.New(t, discordtest.Config{})
	guard, _ := netguard.New(netguard.Config{AllowPrivate: []string{"127.0.0.1"}})
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL, MediaClient: guard.Client(10*time.Second, 3)}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script, ws, chart := mediaRig(t, "discord", bot)
	until(t, "the gateway session", srv.Connected)
	photo := append([]byte{0x89, 'P', 'N', 'G'}, bytes.Repeat([]byte{6}, 700)...)
	srv.Say(t, discordtest.Message{ChannelID: "dm7", AuthorID: "7", Content: "what is it?", Attachments: []string{srv.AddFile("cat.png", "image/png", photo)}})
	var fileMsg string
	until(t, "the chart as an attachment", func() bool {
		for _, m := range srv.SentMessages("dm7") {
			if len(m.Attachments) > 0 {
				fileMsg = m.ID
				return true
			}
		}
		return false
	})
	if got := srv.Files(fileMsg)["chart.png"]; !bytes.Equal(got, chart) {
		t.Errorf("attached %d bytes, want chart.png's %d", len(got), len(chart))
	}
	checkImageReached(t, script, ws, photo)
}

// TestFeishuMediaBothWays: an image message is downloaded from the message's resources and
// reaches the vision model; the answer's MEDIA: chart.png is uploaded and sent as an image.
func TestFeishuMediaBothWays(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script, ws, chart := mediaRig(t, "feishu", bot)
	until(t, "the long connection", srv.Connected)
	photo := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{2}, 600)...)
	srv.UserSendsImage("oc_dm", "ou_alice", photo)
	var img feishutest.SentMessage
	until(t, "the chart as an image message", func() bool {
		for _, m := range srv.Messages() {
			if m.MsgType == "image" {
				img = m
				return true
			}
		}
		return false
	})
	if !bytes.Equal(img.File, chart) {
		t.Errorf("the image message shows %d bytes, want chart.png's %d", len(img.File), len(chart))
	}
	checkImageReached(t, script, ws, photo)
}

// TestFeishuPostImagesReachTheModel: a rich-text post with text and two images reaches the
// vision model as its text and both images, saved in the inbox like single image messages.
func TestFeishuPostImagesReachTheModel(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	script, ws, _ := mediaRig(t, "feishu", bot)
	until(t, "the long connection", srv.Connected)
	cat := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{3}, 500)...)
	dog := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{4}, 300)...)
	srv.UserSendsPost("oc_dm", "ou_alice", "", "which one is cuter?", cat, dog)
	until(t, "the answer", func() bool { return len(script.Requests()) > 0 && len(srv.Messages()) > 0 })
	reqs := script.Requests()
	last := reqs[len(reqs)-1].Messages
	var text string
	var images [][]byte
	for _, m := range last {
		if m.Role == "user" {
			text += m.Content
			for _, md := range m.Media {
				images = append(images, md.Data)
			}
		}
	}
	if !strings.Contains(text, "which one is cuter?") || strings.Count(text, "[image: inbox/") != 2 {
		t.Errorf("the model was told %q, want the text and both saved images", text)
	}
	if len(images) != 2 || !bytes.Equal(images[0], cat) || !bytes.Equal(images[1], dog) {
		t.Errorf("the model got %d images, want the cat and the dog in order", len(images))
	}
	saved, _ := filepath.Glob(filepath.Join(ws, "inbox", "*", "*"))
	if len(saved) != 2 {
		t.Errorf("inbox holds %v, want both images", saved)
	}
}

// TestFeishuVoiceIsTranscribed: a Feishu voice message (Opus in Ogg) reaches the transcription
// service under a name it takes (.ogg; OpenAI refuses .opus), and the transcript reaches the
// model (#33 point 5).
func TestFeishuVoiceIsTranscribed(t *testing.T) {
	srv := feishutest.New(t, feishutest.Config{})
	bot, err := feishu.New(srv.BotConfig(), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	stt, transcribed := transcriptionServer(t, "call the plumber at nine")
	script := fakellm.NewScript()
	script.Respond = func(fakellm.Request) fakellm.Reply { return fakellm.Reply{Text: "noted"} }
	reg, _ := tools.NewRegistry()
	ag := &actors.Agent{ID: "main", Workspace: t.TempDir(), Model: "fake/m", Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000}
	rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: memory.New(), Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"feishu": bot},
		Media:    actors.MediaSettings{Transcriber: &media.OpenAITranscriber{BaseURL: stt.URL + "/v1", APIKey: "tk", Model: "whisper-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(10 * time.Second) })
	until(t, "the long connection", srv.Connected)
	srv.UserSendsAudio("oc_dm", "ou_alice", []byte("OggS-opus-voice"))
	until(t, "the answer", func() bool { return len(srv.Messages()) > 0 })
	if transcribed.Load() != 1 {
		t.Errorf("%d transcriptions, want 1", transcribed.Load())
	}
	reqs := script.Requests()
	if body := reqs[len(reqs)-1].Messages; !strings.Contains(fmt.Sprint(body), "call the plumber at nine") {
		t.Errorf("the model did not get the transcript: %v", body)
	}
}
