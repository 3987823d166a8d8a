package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody"
)

var _ providers.Embedder = (*Client)(nil)

// Embed calls POST /v1beta/models/{model}:batchEmbedContents and returns the vectors in
// input order.
func (c *Client) Embed(ctx context.Context, model string, input []string) ([][]float32, error) {
	model = strings.TrimPrefix(model, "models/")
	type part struct {
		Text string `json:"text"`
	}
	type content struct {
		Parts []part `json:"parts"`
	}
	type request struct {
		Model   string  `json:"model"`
		Content content `json:"content"`
	}
	reqs := make([]request, len(input))
	for i, s := range input {
		reqs[i] = request{Model: "models/" + model, Content: content{Parts: []part{{Text: s}}}}
	}
	raw, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return nil, fmt.Errorf("%s: embeddings: %w", c.name, err)
	}
	resp, err := c.do(ctx, http.MethodPost, "/v1beta/models/"+url.PathEscape(model)+":batchEmbedContents", reqbody.Body{raw})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: embeddings: decode: %w", c.name, err)
	}
	if len(out.Embeddings) != len(input) {
		return nil, fmt.Errorf("%s: embeddings: %d vectors for %d inputs", c.name, len(out.Embeddings), len(input))
	}
	vecs := make([][]float32, len(input))
	for i, e := range out.Embeddings {
		vecs[i] = e.Values
	}
	return vecs, nil
}
