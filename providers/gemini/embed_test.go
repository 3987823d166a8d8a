package gemini_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

func TestEmbed(t *testing.T) {
	c, script, srv := setup(t)
	vecs, err := c.Embed(context.Background(), "gemini-embedding-001", []string{"hello", "你好"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || len(vecs[0]) != fake.DefaultEmbeddingDims || vecs[0][0] != fake.Vector("hello", fake.DefaultEmbeddingDims)[0] {
		t.Fatalf("got %d vectors", len(vecs))
	}
	reqs := script.Embeddings().Requests()
	if len(reqs) != 1 || reqs[0].Model != "gemini-embedding-001" || !strings.Contains(string(reqs[0].Body), `"model":"models/gemini-embedding-001"`) {
		t.Fatalf("requests %+v", reqs)
	}
	for _, u := range srv.RequestURIs() {
		if strings.Contains(u, canary) {
			t.Errorf("the key is in the URL %s", u)
		}
	}
	script.Embeddings().Set(503, 0, 0)
	_, err = c.Embed(context.Background(), "gemini-embedding-001", []string{"x"})
	if !errors.Is(err, providers.ErrOverloaded) || strings.Contains(err.Error(), canary) {
		t.Errorf("503: got %v, want ErrOverloaded without the key", err)
	}
}
