package anthropic

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

// TestImageInput: a user message's image goes as an image block with a base64 source before
// its text; a message whose image has no bytes stays text.
func TestImageInput(t *testing.T) {
	got := encoded(t, New(Config{APIKey: "k"}), imageRequest())
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
