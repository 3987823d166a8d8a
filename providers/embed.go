package providers

import (
	"context"
	"fmt"
)

// Embedder turns texts into embedding vectors, one per input, in order (memory search).
// The openai and gemini clients implement it.
type Embedder interface {
	Embed(ctx context.Context, model string, input []string) ([][]float32, error)
}

// RetryEmbed retries e's calls that fail with a retryable error, with the backoff and
// Retry-After handling of Retry.
func RetryEmbed(e Embedder, cfg RetryConfig) Embedder {
	return &embedRetrier{e: e, r: &retrier{cfg: cfg.withDefaults()}}
}

type embedRetrier struct {
	e Embedder
	r *retrier
}

func (er *embedRetrier) Embed(ctx context.Context, model string, input []string) ([][]float32, error) {
	for attempt := 0; ; attempt++ {
		vecs, err := er.e.Embed(ctx, model, input)
		if err == nil || !retryable(ctx, err) || attempt >= er.r.cfg.MaxRetries {
			return vecs, err
		}
		d, ok := er.r.delay(attempt, err)
		if !ok {
			return nil, err
		}
		if serr := er.r.cfg.Sleep(ctx, d); serr != nil {
			return nil, fmt.Errorf("providers: retry: %w (last error: %v)", serr, err)
		}
	}
}
