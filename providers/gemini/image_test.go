package gemini

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

// TestImageInput: a user message's image goes as an inlineData part before its text; a
// message whose image has no bytes stays text.
func TestImageInput(t *testing.T) {
	got := encoded(t, New(Config{APIKey: "k"}), imageRequest())
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
