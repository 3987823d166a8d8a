package openai

import (
	"encoding/json"
	"testing"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody/reqbodytest"
)

// TestBodySplicesTheStablePrefix: the encoded body is the request one json.Marshal of the
// whole of it (tools included) would write, and requests share the stable prompt's and the
// tools' encoded bytes (reqbodytest.Check).
func TestBodySplicesTheStablePrefix(t *testing.T) {
	c := New(Config{Name: "t", BaseURL: "http://127.0.0.1:1/v1"})
	reqbodytest.Check(t, c.encode, func(req providers.Request) ([]byte, error) {
		req.System, req.SystemTail = req.System+req.SystemTail, ""
		return json.Marshal(struct {
			chatRequest
			Tools []wireTool `json:"tools,omitempty"`
		}{c.buildRequest(req), wireTools(req.Tools)})
	}, string(systemOpen))
}
