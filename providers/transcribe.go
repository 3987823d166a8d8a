package providers

import (
	"context"
	"fmt"
)

// Transcriber turns recorded speech into text with a model (voice notes, audio files). The
// gemini client implements it; OpenAI-compatible /audio/transcriptions lives in
// internal/media, which needs no model client.
type Transcriber interface {
	Transcribe(ctx context.Context, model, mime string, audio []byte) (string, error)
}

// RetryTranscribe retries t's calls that fail with a retryable error, with the backoff and
// Retry-After handling of Retry (the audio is held in memory, so each attempt resends it).
func RetryTranscribe(t Transcriber, cfg RetryConfig) Transcriber {
	return &transcribeRetrier{t: t, r: &retrier{cfg: cfg.withDefaults()}}
}

type transcribeRetrier struct {
	t Transcriber
	r *retrier
}

func (tr *transcribeRetrier) Transcribe(ctx context.Context, model, mime string, audio []byte) (string, error) {
	var text string
	err := tr.r.call(ctx, func() (err error) {
		text, err = tr.t.Transcribe(ctx, model, mime, audio)
		return err
	})
	return text, err
}

// call runs f until it succeeds, fails with an error not worth retrying, or the retries are
// spent; it waits between attempts as Retry does.
func (r *retrier) call(ctx context.Context, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil || !retryable(ctx, err) || attempt >= r.cfg.MaxRetries {
			return err
		}
		d, ok := r.delay(attempt, err)
		if !ok {
			return err
		}
		if serr := r.cfg.Sleep(ctx, d); serr != nil {
			return fmt.Errorf("providers: retry: %w (last error: %v)", serr, err)
		}
	}
}
