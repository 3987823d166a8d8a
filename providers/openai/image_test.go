package openai

import (
	"testing"

	"github.com/reefgw/reef/providers/internal/reqbody/reqbodytest"
)

// TestImageInput: a user message's image goes as an image_url part holding a data: URL
// after the text part; a message whose image has no bytes stays plain text.
func TestImageInput(t *testing.T) {
	got := reqbodytest.Decoded(t, New(Config{APIKey: "k"}).encode, reqbodytest.ImageRequest())
	msgs := got["messages"].([]any)
	if old := msgs[1].(map[string]any)["content"]; old != "old [image: inbox/a.jpg]" {
		t.Errorf("older message content = %v, want its text", old)
	}
	parts, ok := msgs[3].(map[string]any)["content"].([]any)
	if !ok || len(parts) != 2 {
		t.Fatalf("content = %v, want a text and an image part", msgs[3])
	}
	text, img := parts[0].(map[string]any), parts[1].(map[string]any)
	if text["type"] != "text" || text["text"] != "what is this? [image: inbox/b.png]" {
		t.Errorf("text part = %v", text)
	}
	want := "data:image/png;base64,iVBORy1ieXRlcw=="
	if img["type"] != "image_url" || img["image_url"].(map[string]any)["url"] != want {
		t.Errorf("image part = %v, want image_url %s", img, want)
	}
}
