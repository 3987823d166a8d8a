package main

import (
	"context"
	"strings"
	"testing"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/media"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini/geminitest"
)

// TestGeminiTranscriptionWiring: media.transcription naming a provider of type gemini
// transcribes through the Gemini wire fake, with the provider's key, retrying a 503 as model
// calls are retried; one of type openai gets the /audio/transcriptions client; none, nothing.
func TestGeminiTranscriptionWiring(t *testing.T) {
	const key = "AIzaTRANSCRIBE-0123456789abcdefghijkl"
	script := fake.NewScript(fake.Reply{Status: 503}, fake.Reply{Text: "see you at noon"})
	srv := geminitest.NewServer(script, geminitest.WithAPIKey(key))
	t.Cleanup(srv.Close)
	cfg := &configs.Config{
		Providers: map[string]configs.ProviderConfig{
			"google": {Type: "gemini", BaseURL: srv.URL(), APIKey: key},
			"openai": {Type: "openai", APIKey: "sk"},
		},
		Media: configs.MediaConfig{Transcription: configs.TranscriptionConfig{Provider: "google", Model: "gemini-2.5-flash"}},
	}
	tr := mediaSettings(cfg).Transcriber
	if tr == nil {
		t.Fatal("no transcriber for a gemini provider")
	}
	text, err := tr.Transcribe(context.Background(), "voice.ogg", "audio/ogg", strings.NewReader("OggS-voice"))
	if err != nil || text != "see you at noon" {
		t.Fatalf("Transcribe = %q, %v; want the fake's answer after a retried 503", text, err)
	}
	reqs := script.Requests()
	if len(reqs) != 2 || reqs[1].Model != "gemini-2.5-flash" || len(reqs[1].Messages) != 1 ||
		len(reqs[1].Messages[0].Media) != 1 || string(reqs[1].Messages[0].Media[0].Data) != "OggS-voice" {
		t.Errorf("requests %+v, want two carrying the audio inline to gemini-2.5-flash", reqs)
	}

	cfg.Media.Transcription = configs.TranscriptionConfig{Provider: "openai", Model: "whisper-1"}
	if _, ok := mediaSettings(cfg).Transcriber.(*media.OpenAITranscriber); !ok {
		t.Errorf("an openai provider got %T, want the /audio/transcriptions client", mediaSettings(cfg).Transcriber)
	}
	cfg.Media.Transcription = configs.TranscriptionConfig{}
	if tr := mediaSettings(cfg).Transcriber; tr != nil {
		t.Errorf("transcription off got %T, want none", tr)
	}
}
