package configs

import (
	"strings"
	"testing"
)

// TestValidateTranscription: media.transcription takes a provider of type openai or gemini
// and a model; another type, an unknown provider or a missing model is refused with a line
// that says what to do.
func TestValidateTranscription(t *testing.T) {
	tests := []struct {
		name     string
		t        TranscriptionConfig
		want     string // "" means valid
		wantType string
	}{
		{"openai", TranscriptionConfig{Provider: "openai", Model: "whisper-1"}, "", "openai"},
		{"gemini", TranscriptionConfig{Provider: "google", Model: "gemini-2.5-flash"}, "", "gemini"},
		{"anthropic", TranscriptionConfig{Provider: "claude", Model: "claude-x"},
			`media.transcription.provider: "claude" is of type anthropic: reef transcribes with an OpenAI-compatible /audio/transcriptions (type openai) or Gemini (type gemini)`, ""},
		{"unknown", TranscriptionConfig{Provider: "groq", Model: "whisper-large-v3"}, `media.transcription.provider: "groq" is not a configured provider`, ""},
		{"no model", TranscriptionConfig{Provider: "google"}, `media.transcription.model: name the transcription model, e.g. whisper-1 or gemini-2.5-flash`, ""},
		{"off", TranscriptionConfig{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			c.Providers["google"] = ProviderConfig{Type: "gemini", APIKey: "g"}
			c.Providers["claude"] = ProviderConfig{Type: "anthropic", APIKey: "a"}
			c.Media.Transcription = tt.t
			got := strings.Join(errLines(c.Validate()), "\n")
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
			if tt.want == "" && c.TranscriptionType() != tt.wantType {
				t.Errorf("TranscriptionType() = %q, want %q", c.TranscriptionType(), tt.wantType)
			}
		})
	}
}
