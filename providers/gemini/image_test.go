package gemini

import (
	"testing"

	"github.com/reefgw/reef/providers/internal/reqbody/reqbodytest"
)

// TestImageInput: a user message's image goes as an inlineData part before its text; a
// message whose image has no bytes stays text.
func TestImageInput(t *testing.T) {
	got := reqbodytest.Decoded(t, New(Config{APIKey: "k"}).encode, reqbodytest.ImageRequest())
	contents := got["contents"].([]any)
	if old := contents[0].(map[string]any)["parts"].([]any); len(old) != 1 || old[0].(map[string]any)["inlineData"] != nil {
		t.Errorf("older message = %v, want one text part", old)
	}
	parts := contents[2].(map[string]any)["parts"].([]any)
	if len(parts) != 2 {
		t.Fatalf("parts = %v, want an image and a text part", parts)
	}
	img, _ := parts[0].(map[string]any)["inlineData"].(map[string]any)
	if img["mimeType"] != "image/png" || img["data"] != "iVBORy1ieXRlcw==" {
		t.Errorf("image part = %v", parts[0])
	}
	if parts[1].(map[string]any)["text"] != "what is this? [image: inbox/b.png]" {
		t.Errorf("text part = %v", parts[1])
	}
}
