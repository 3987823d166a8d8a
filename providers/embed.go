package providers

import "context"

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
	var vecs [][]float32
	err := er.r.call(ctx, func() (err error) {
		vecs, err = er.e.Embed(ctx, model, input)
		return err
	})
	if err != nil {
		return nil, err
	}
	return vecs, nil
}
