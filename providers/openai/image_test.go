package openai

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// imageRequest is a user message with a saved photo whose bytes the Turn loaded (a vision
// model), and an older one whose image carries no bytes (stays a path in the text).
func imageRequest() providers.Request {
	return providers.Request{Model: "m", System: "sys", Messages: []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "old [image: inbox/a.jpg]", Media: []messages.Media{{Kind: messages.MediaImage, Path: "inbox/a.jpg"}}},
		{Role: messages.RoleAssistant, Content: "seen"},
		{Role: messages.RoleUser, Content: "what is this? [image: inbox/b.png]", Media: []messages.Media{
			{Kind: messages.MediaImage, MIME: "image/png", Path: "inbox/b.png", Data: []byte("\x89PNG-bytes")}}},
	}}
}

// encoded returns the request body as the client sends it, decoded.
func encoded(t *testing.T, c *Client, req providers.Request) map[string]any {
	t.Helper()
	body, err := c.encode(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body.Reader()); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	return out
}

// TestImageInput: a user message's image goes as an image_url part holding a data: URL
// after the text part; a message whose image has no bytes stays plain text.
func TestImageInput(t *testing.T) {
	got := encoded(t, New(Config{APIKey: "k"}), imageRequest())
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
