package gemini

import (
	"encoding/json"
	"testing"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody/reqbodytest"
)

// TestBodySharesThePromptAndTools: the encoded body is buildRequest's request, and requests
// share the stable prompt's and the tools' encoded bytes (reqbodytest.Check).
func TestBodySharesThePromptAndTools(t *testing.T) {
	c := New(Config{Name: "t", APIKey: "k"})
	reqbodytest.Check(t, c.encode, func(req providers.Request) ([]byte, error) {
		return json.Marshal(buildRequest(req))
	}, string(systemOpen))
}

// BenchmarkEncodeFirstTurn: the body of a first turn's size, as every request of a burst
// encodes it.
func BenchmarkEncodeFirstTurn(b *testing.B) {
	c := New(Config{APIKey: "k"})
	req := reqbodytest.FirstTurn()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.encode(req); err != nil {
			b.Fatal(err)
		}
	}
}
