package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/reefgw/reef/providers"
)

var _ providers.Embedder = (*Client)(nil)

// maxEmbedResponse caps an embeddings answer: 2048 inputs of 3072 dimensions fit.
const maxEmbedResponse = 256 << 20

// Embed calls POST <base>/embeddings {"model", "input": [...]} and returns the vectors in
// input order. OpenAI, Ollama, vLLM and llama.cpp server speak it.
func (c *Client) Embed(ctx context.Context, model string, input []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": model, "input": input})
	if err != nil {
		return nil, fmt.Errorf("%s: embeddings: %w", c.cfg.Name, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: embeddings: %w", c.cfg.Name, err)
	}
	c.setHeaders(hreq)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, c.statusError(resp)
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxEmbedResponse)).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: embeddings: decode: %w", c.cfg.Name, c.transportError(ctx, err))
	}
	vecs := make([][]float32, len(input))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("%s: embeddings: bad index %d in the answer", c.cfg.Name, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if v == nil {
			return nil, fmt.Errorf("%s: embeddings: no vector for input %d", c.cfg.Name, i)
		}
	}
	return vecs, nil
}
