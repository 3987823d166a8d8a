package anthropic

import (
	"testing"

	"github.com/reefgw/reef/providers/internal/reqbody/reqbodytest"
)

// TestImageInput: a user message's image goes as an image block with a base64 source before
// its text; a message whose image has no bytes stays text.
func TestImageInput(t *testing.T) {
	got := reqbodytest.Decoded(t, New(Config{APIKey: "k"}).encode, reqbodytest.ImageRequest())
	msgs := got["messages"].([]any)
	old := msgs[0].(map[string]any)["content"].([]any)
	if len(old) != 1 || old[0].(map[string]any)["type"] != "text" {
		t.Errorf("older message = %v, want one text block", old)
	}
	blocks := msgs[2].(map[string]any)["content"].([]any)
	if len(blocks) != 2 {
		t.Fatalf("content = %v, want an image and a text block", blocks)
	}
	img := blocks[0].(map[string]any)
	src, _ := img["source"].(map[string]any)
	if img["type"] != "image" || src["type"] != "base64" || src["media_type"] != "image/png" || src["data"] != "iVBORy1ieXRlcw==" {
		t.Errorf("image block = %v", img)
	}
	if blocks[1].(map[string]any)["text"] != "what is this? [image: inbox/b.png]" {
		t.Errorf("text block = %v", blocks[1])
	}
}
