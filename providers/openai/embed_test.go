package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

func TestEmbed(t *testing.T) {
	script := fake.NewScript()
	srv := openaitest.NewServer(script)
	defer srv.Close()
	const key = "sk-embed-canary-0123456789abcdef"
	c := openai.New(openai.Config{BaseURL: srv.URL(), APIKey: key})
	ctx := context.Background()
	vecs, err := c.Embed(ctx, "text-embedding-3-small", []string{"最喜欢的编程语言", "Rust"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || len(vecs[1]) != fake.DefaultEmbeddingDims || vecs[1][3] != fake.Vector("Rust", fake.DefaultEmbeddingDims)[3] {
		t.Fatalf("got %d vectors, not the fake's", len(vecs))
	}
	reqs := script.Embeddings().Requests()
	if len(reqs) != 1 || string(reqs[0].Body) != `{"input":["最喜欢的编程语言","Rust"],"model":"text-embedding-3-small"}` {
		t.Fatalf("requests %+v", reqs)
	}

	// Errors are classified, so RetryEmbed retries what is worth it, and carry no key.
	script.Embeddings().Set(500, 0, 0)
	_, err = c.Embed(ctx, "m", []string{"x"})
	if !errors.Is(err, providers.ErrServer) || strings.Contains(err.Error(), key) {
		t.Fatalf("500: got %v", err)
	}
	calls := len(script.Embeddings().Requests())
	r := providers.RetryEmbed(c, providers.RetryConfig{MaxRetries: 2, Sleep: func(context.Context, time.Duration) error { return nil }})
	if _, err := r.Embed(ctx, "m", []string{"x"}); !errors.Is(err, providers.ErrServer) {
		t.Fatalf("retried 500: got %v", err)
	}
	if got := len(script.Embeddings().Requests()) - calls; got != 3 {
		t.Errorf("RetryEmbed made %d calls, want 3 (1 + 2 retries)", got)
	}
	script.Embeddings().Set(0, 0, 0)
	if _, err := r.Embed(ctx, "m", []string{"x"}); err != nil {
		t.Errorf("after recovery: %v", err)
	}

	// A slow server is cut by the caller's deadline.
	script.Embeddings().Set(0, time.Minute, 0)
	ctx2, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Embed(ctx2, "m", []string{"x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow server: got %v, want the deadline", err)
	}
}
