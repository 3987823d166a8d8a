package geminitest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/reefgw/reef/providers/fake"
)

// embed serves POST /v1beta/models/{model}:batchEmbedContents: {"requests": [{"model":
// "models/{model}", "content": {"parts": [{"text"}]}}]} → {"embeddings": [{"values": [...]}]},
// with fake.Vector and the script's Embeddings settings and record.
func (s *Server) embed(w http.ResponseWriter, r *http.Request, model string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Requests []struct {
			Model   string `json:"model"`
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Invalid JSON payload received. "+err.Error(), nil)
		return
	}
	var input []string
	for _, q := range req.Requests {
		if q.Model != "models/"+model {
			writeError(w, http.StatusBadRequest, "request model "+q.Model+" does not match models/"+model, nil)
			return
		}
		var text []string
		for _, p := range q.Content.Parts {
			text = append(text, p.Text)
		}
		input = append(input, strings.Join(text, ""))
	}
	e := s.script.Embeddings()
	status, _, dims := e.Record(fake.EmbedRequest{Model: model, Input: input, Body: body})
	if status != 0 {
		writeError(w, status, "The service is currently unavailable (scripted).", nil)
		return
	}
	out := make([]map[string]any, len(input))
	for i, t := range input {
		out[i] = map[string]any{"values": fake.Vector(t, dims)}
	}
	w.Header().Set("content-type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
}
