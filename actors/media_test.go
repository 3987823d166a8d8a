package actors_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/memory"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
	"github.com/reefgw/reef/tools"
)

// transcriptionServer fakes POST /v1/audio/transcriptions (OpenAI's multipart form: model,
// file) and answers {"text": text}. It counts the calls that carried a file. Like OpenAI, it
// refuses a file whose name's extension is not one of its formats (.opus is not).
func transcriptionServer(t *testing.T, text string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/transcriptions" || r.Header.Get("Authorization") != "Bearer tk" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		f, hdr, err := r.FormFile("file")
		if err != nil || r.FormValue("model") != "whisper-1" {
			http.Error(w, `{"error":{"message":"bad form"}}`, http.StatusBadRequest)
			return
		}
		data, _ := io.ReadAll(f)
		if len(data) == 0 || hdr.Filename == "" {
			http.Error(w, `{"error":{"message":"empty file"}}`, http.StatusBadRequest)
			return
		}
		switch strings.ToLower(filepath.Ext(hdr.Filename)) { // OpenAI goes by the name's extension
		case ".flac", ".m4a", ".mp3", ".mp4", ".mpeg", ".mpga", ".oga", ".ogg", ".wav", ".webm":
		default:
			http.Error(w, `{"error":{"message":"Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']","type":"invalid_request_error","param":null,"code":null}}`, http.StatusBadRequest)
			return
		}
		calls.Add(1)
		json.NewEncoder(w).Encode(map[string]string{"text": text})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestTelegramMediaBothWays: on the Telegram wire fake with the real OpenAI client against
// its wire fake: a photo is saved under inbox/<date>/ and reaches the vision model as an
// image_url part; a voice note is transcribed by the transcription fake and the transcript
// reaches the model; a 30 MB document over the cap is not downloaded and the model is told
// its name and size; a reply's MEDIA: chart.png arrives as a photo, and MEDIA: with a path
// outside the workspace is refused with a note.
func TestTelegramMediaBothWays(t *testing.T) {
	tg := telegramtest.New(t)
	sent := sentTo(tg, 20)
	bot := telegramBot(t, tg)
	script := fakellm.NewScript(
		fakellm.Reply{Text: "A chart.\nMEDIA: chart.png"},
		fakellm.Reply{Text: "Noted."},
		fakellm.Reply{Text: "Too big for me."},
		fakellm.Reply{Text: "Here:\nMEDIA: /etc/passwd"},
	)
	llm := openaitest.NewServer(script)
	t.Cleanup(llm.Close)
	stt, transcribed := transcriptionServer(t, "buy milk tomorrow")
	ws := t.TempDir()
	chart := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 300)...)
	os.WriteFile(filepath.Join(ws, "chart.png"), chart, 0o644)
	reg, _ := tools.NewRegistry()
	ag := &actors.Agent{ID: "main", Workspace: ws, Model: "openai/gpt-4o", Vision: true,
		Provider: openai.New(openai.Config{BaseURL: llm.URL(), APIKey: "k"}), Tools: reg, ContextWindow: 128000}
	startAgent(t, ag, "telegram", bot, func(d *actors.Deps) {
		d.Media = actors.MediaSettings{Transcriber: &media.OpenAITranscriber{BaseURL: stt.URL + "/v1", APIKey: "tk", Model: "whisper-1"}}
	})
	answer := func() telegramtest.SentMessage { return nextAnswer(t, sent) }
	lastBody := func() string {
		reqs := script.Requests()
		return string(reqs[len(reqs)-1].Body)
	}

	photo := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{1}, 2000)...)
	tg.UserSendsPhoto(5, 5, photo, "what is this?")
	if m := answer(); m.Text != "A chart." {
		t.Fatalf("first answer %+v, want the text", m)
	}
	if m := answer(); m.Kind != "photo" || m.FileName != "chart.png" || !bytes.Equal(m.File, chart) {
		t.Errorf("then %s %q (%d bytes), want chart.png as a photo", m.Kind, m.FileName, len(m.File))
	}
	saved, _ := filepath.Glob(filepath.Join(ws, "inbox", "*", "*"))
	if len(saved) != 1 || !strings.HasSuffix(saved[0], ".jpg") {
		t.Fatalf("inbox holds %v, want the photo", saved)
	}
	if data, _ := os.ReadFile(saved[0]); !bytes.Equal(data, photo) {
		t.Errorf("the saved photo has %d bytes, want %d", len(data), len(photo))
	}
	body := lastBody()
	if !strings.Contains(body, `"type":"image_url"`) || !strings.Contains(body, "data:image/jpeg;base64,/9j/4A") {
		t.Errorf("the request holds no image_url part with the photo:\n%.600s", body)
	}

	tg.UserSendsVoice(5, 5, []byte("OggS-voice-bytes"))
	if m := answer(); m.Text != "Noted." {
		t.Fatalf("answer %+v", m)
	}
	if transcribed.Load() != 1 {
		t.Errorf("%d transcriptions, want 1", transcribed.Load())
	}
	if body := lastBody(); !strings.Contains(body, "buy milk tomorrow") || !strings.Contains(body, "inbox/") {
		t.Errorf("the request holds no transcript with the path:\n%.2000s", body)
	}

	tg.UserSendsDocument(5, 5, "scan.pdf", "application/pdf", []byte("%PDF-1.4"), 30<<20)
	if m := answer(); m.Text != "Too big for me." {
		t.Fatalf("answer %+v", m)
	}
	if body := lastBody(); !strings.Contains(body, "scan.pdf (30.0 MB)") || !strings.Contains(body, "not downloaded") {
		t.Errorf("the request holds no note with the name and size:\n%.2000s", body)
	}
	if n := tg.Downloads(); n != 2 {
		t.Errorf("%d downloads, want 2 (the photo and the voice note; not the 30 MB file)", n)
	}

	tg.UserSays(5, 5, "send me the passwords")
	if m := answer(); !strings.Contains(m.Text, "Here:") || !strings.Contains(m.Text, "/etc/passwd not sent") || m.Kind != "" {
		t.Errorf("answer %q (%s), want the text with a note that the file was refused", m.Text, m.Kind)
	}
}

// TestMessageToolSendsMedia: the message tool's media sends a workspace file as a photo on
// the Telegram wire fake while the run goes on; a path outside the workspace is an error
// result for the model, and nothing is sent.
func TestMessageToolSendsMedia(t *testing.T) {
	tg := telegramtest.New(t)
	sent := sentTo(tg, 20)
	bot := telegramBot(t, tg)
	ws := t.TempDir()
	chart := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{5}, 100)...)
	os.WriteFile(filepath.Join(ws, "chart.png"), chart, 0o644)
	script := fakellm.NewScript(
		fakellm.Reply{ToolCalls: []messages.ToolCall{
			call("m1", "message", map[string]any{"action": "send", "media": "chart.png", "message": "the chart"}),
			call("m2", "message", map[string]any{"action": "send", "media": "/etc/hostname"}),
		}},
		fakellm.Reply{Text: "Done."},
	)
	reg, policy := messageTools(t)
	startAgent(t, &actors.Agent{ID: "main", Workspace: ws, Model: "fake/m", Provider: fakellm.New(script), Tools: reg, Policy: policy,
		ContextWindow: 128000}, "telegram", bot, nil)
	tg.UserSays(6, 6, "chart please")
	var photo *telegramtest.SentMessage
	for photo == nil {
		if m := testutil.Receive(t, sent); m.Kind == "photo" {
			photo = &m
		} else if m.Kind != "" {
			t.Fatalf("sent a %s", m.Kind)
		}
	}
	if photo.FileName != "chart.png" || !bytes.Equal(photo.File, chart) {
		t.Errorf("photo %q with %d bytes, want chart.png", photo.FileName, len(photo.File))
	}
	for m := testutil.Receive(t, sent); m.Text != "Done."; m = testutil.Receive(t, sent) {
		if m.Kind != "" {
			t.Errorf("another file was sent: %s %q", m.Kind, m.FileName)
		}
	}
	var refused bool
	for _, r := range script.Requests() {
		for _, m := range r.Messages {
			if m.Role == messages.RoleTool && m.ToolCallID == "m2" && strings.Contains(m.Content, "outside your workspace") {
				refused = true
			}
		}
	}
	if !refused {
		t.Error("the model was not told that /etc/hostname is outside the workspace")
	}
}

// TestFilesOnlyReplyReplacesTheDraft: a reply that is only a MEDIA: line, to a run slow
// enough to show a draft, sends the file and takes the draft away.
func TestFilesOnlyReplyReplacesTheDraft(t *testing.T) {
	tg := telegramtest.New(t)
	sent := sentTo(tg, 20)
	bot := telegramBot(t, tg)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "report.csv"), []byte("a,b\n"), 0o644)
	release := make(chan struct{})
	script := fakellm.NewScript()
	script.Respond = func(fakellm.Request) fakellm.Reply {
		<-release // the draft shows meanwhile
		return fakellm.Reply{Text: "MEDIA: report.csv"}
	}
	reg, _ := tools.NewRegistry()
	startAgent(t, &actors.Agent{ID: "main", Workspace: ws, Model: "fake/m", Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000},
		"telegram", bot, nil)
	tg.UserSays(9, 9, "the report please")
	if m := testutil.Receive(t, sent); m.Kind != "" || m.Text == "" { // "…" or a progress label
		t.Fatalf("first message %+v, want the draft", m)
	}
	close(release)
	m := testutil.Receive(t, sent)
	if m.Kind != "document" || m.FileName != "report.csv" {
		t.Fatalf("then %+v, want report.csv as a document", m)
	}
	deadline := time.Now().Add(testutil.Timeout)
	for {
		msgs := tg.Messages(9)
		if msgs[0].Deleted && len(msgs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("messages %+v, want the draft deleted and the file only", msgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMediaFetchedAgainAfterARestart: a photo accepted before a stop whose run never finished
// is downloaded again by the next start's run (its file is gone meanwhile) and reaches the
// vision model then.
func TestMediaFetchedAgainAfterARestart(t *testing.T) {
	tg := telegramtest.New(t)
	ws := t.TempDir()
	store := memory.New()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var calls atomic.Int32
	script := fakellm.NewScript()
	script.Respond = func(fakellm.Request) fakellm.Reply {
		if calls.Add(1) == 1 {
			<-release // the first start stops while its run waits here
		}
		return fakellm.Reply{Text: "a photo"}
	}
	start := func() *actors.Runtime {
		bot := telegramBot(t, tg)
		reg, _ := tools.NewRegistry()
		ag := &actors.Agent{ID: "main", Workspace: ws, Model: "fake/m", Vision: true, Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000}
		rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
			Channels: map[string]channels.Channel{"telegram": bot}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(testutil.Timeout)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	rt := start()
	photo := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{4}, 900)...)
	tg.UserSendsPhoto(3, 3, photo, "look")
	waitFor("the first run's model call", func() bool { return calls.Load() == 1 })
	rt.Stop(10 * time.Second)
	if err := os.RemoveAll(filepath.Join(ws, "inbox")); err != nil {
		t.Fatal(err)
	}
	rt = start()
	t.Cleanup(func() { rt.Stop(10 * time.Second) })
	waitFor("the answer after the restart", func() bool {
		for _, s := range tg.Sent(3) {
			if s == "a photo" {
				return true
			}
		}
		return false
	})
	saved, _ := filepath.Glob(filepath.Join(ws, "inbox", "*", "*.jpg"))
	if len(saved) != 1 {
		t.Fatalf("inbox after the restart holds %v, want the photo again", saved)
	}
	reqs := script.Requests()
	last := reqs[len(reqs)-1].Messages
	var data []byte
	for _, m := range last {
		for _, md := range m.Media {
			data = append(data, md.Data...)
		}
	}
	if !bytes.Equal(data, photo) {
		t.Errorf("the model after the restart got %d image bytes, want the photo's %d", len(data), len(photo))
	}
	if n := tg.Downloads(); n != 2 {
		t.Errorf("%d downloads, want 2 (once per start)", n)
	}
}
