package actors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/persistence/memory"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/gemini/geminitest"
	"github.com/reefgw/reef/tools"
)

// TestVoiceTranscribedByGemini: a Telegram voice note is transcribed by the Gemini wire
// fake (generateContent with the audio inline) and the transcript reaches the agent's model
// as untrusted data with the saved file's path.
func TestVoiceTranscribedByGemini(t *testing.T) {
	tg := telegramtest.New(t)
	sent := sentTo(tg, 20)
	bot := telegramBot(t, tg)
	stt := fakellm.NewScript(fakellm.Reply{Text: "call the dentist on Monday"})
	gsrv := geminitest.NewServer(stt)
	t.Cleanup(gsrv.Close)
	tr := &media.ModelTranscriber{Model: "gemini-2.5-flash",
		Client: providers.RetryTranscribe(gemini.New(gemini.Config{BaseURL: gsrv.URL(), APIKey: "k"}), providers.RetryConfig{})}
	script := fakellm.NewScript(fakellm.Reply{Text: "Noted."})
	reg, _ := tools.NewRegistry()
	ag := &actors.Agent{ID: "main", Workspace: t.TempDir(), Model: "fake/m", Provider: fakellm.New(script), Tools: reg, ContextWindow: 128000}
	rt, err := actors.Start(&actors.Deps{Log: testutil.Logger(t), Store: memory.New(), Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{"telegram": bot}, Media: actors.MediaSettings{Transcriber: tr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(10 * time.Second) })
	voice := []byte("OggS-a-voice-note")
	tg.UserSendsVoice(3, 3, voice)
	for testutil.Receive(t, sent).Text != "Noted." { // the draft "…" comes first
	}
	reqs := stt.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 || len(reqs[0].Messages[0].Media) != 1 ||
		string(reqs[0].Messages[0].Media[0].Data) != string(voice) || reqs[0].Messages[0].Media[0].MIME != "audio/ogg" {
		t.Fatalf("transcription requests %+v, want one with the voice note inline", reqs)
	}
	msgs := script.Requests()[0].Messages
	got := msgs[len(msgs)-1].Content
	if !strings.Contains(got, "[voice message: inbox/") || !strings.Contains(got, "call the dentist on Monday") ||
		!strings.Contains(got, media.SourceTranscript) {
		t.Errorf("the model was told %q, want the path and the transcript as untrusted data", got)
	}
}
