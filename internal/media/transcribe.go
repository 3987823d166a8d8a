package media

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// Transcriber turns speech into text: OpenAITranscriber, or ModelTranscriber over a model
// client (Gemini).
type Transcriber interface {
	Transcribe(ctx context.Context, name, mime string, audio io.Reader) (string, error)
}

// OpenAITranscriber calls an OpenAI-compatible POST <BaseURL>/audio/transcriptions
// (OpenAI's whisper-1 or gpt-4o-transcribe, Groq, a local whisper server...).
type OpenAITranscriber struct {
	BaseURL string // e.g. https://api.openai.com/v1
	APIKey  string
	Model   string // e.g. whisper-1
	Client  *http.Client
}

// Transcribe uploads the audio as multipart form data and returns the text of the answer.
func (t *OpenAITranscriber) Transcribe(ctx context.Context, name, mime string, audio io.Reader) (string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("model", t.Model)
	_ = w.WriteField("response_format", "json")
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	if _, err := io.Copy(part, audio); err != nil {
		return "", fmt.Errorf("transcribe: read the audio: %w", err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/audio/transcriptions", &body)
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	if t.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	client := t.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("transcribe: the service answered %d", resp.StatusCode)
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", fmt.Errorf("transcribe: the answer is not JSON: %w", err)
	}
	return out.Text, nil
}

// ModelTranscriber transcribes with a model client that takes the audio whole, such as
// Gemini's generateContent with the audio inline (providers.Transcriber; the client does its
// own retries). The file is read into memory first, so a retry can send it again.
type ModelTranscriber struct {
	Client interface {
		Transcribe(ctx context.Context, model, mime string, audio []byte) (string, error)
	}
	Model string
	// MaxBytes caps what is read of a file (default DefaultAudioBytes, the audio download cap).
	MaxBytes int64
	// Timeout bounds one file's transcription, retries included (0: only ctx), so a hung
	// service holds the run up once, not once per retry.
	Timeout time.Duration
}

// Transcribe reads the audio and hands it to the client with the configured model.
func (t *ModelTranscriber) Transcribe(ctx context.Context, _, mime string, audio io.Reader) (string, error) {
	limit := t.MaxBytes
	if limit <= 0 {
		limit = DefaultAudioBytes
	}
	data, err := io.ReadAll(io.LimitReader(audio, limit+1))
	if err != nil {
		return "", fmt.Errorf("transcribe: read the audio: %w", err)
	}
	if int64(len(data)) > limit {
		return "", fmt.Errorf("transcribe: the audio is over %s", Bytes(limit))
	}
	if t.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.Timeout)
		defer cancel()
	}
	text, err := t.Client.Transcribe(ctx, t.Model, mime, data)
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	return text, nil
}
