package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/internal/imagefit/imagefittest"
)

func photoReq(data []byte, mime string) providers.Request {
	return providers.Request{Model: "claude-fake", Messages: []messages.ChatMessage{{Role: messages.RoleUser,
		Content: "what is this? [image: inbox/p.jpg]", Media: []messages.Media{{Kind: messages.MediaImage, MIME: mime, Path: "inbox/p.jpg", Data: data}}}}}
}

// sentImages returns the base64 data of the image blocks of a recorded request.
func sentImages(t *testing.T, body []byte) []string {
	t.Helper()
	var b struct {
		Messages []struct {
			Content []struct {
				Type   string `json:"type"`
				Source struct {
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range b.Messages {
		for _, c := range m.Content {
			if c.Type == "image" {
				out = append(out, c.Source.Data)
			}
		}
	}
	return out
}

// TestPhotoOverBase64Limit: a 4.5 MB photo (under 5 MiB raw, over 5 MB in base64, which the
// API counts) is scaled down before it is sent, so the API takes it (#33.7).
func TestPhotoOverBase64Limit(t *testing.T) {
	c, script := setupIdle(t, time.Minute, fake.Reply{Text: "a photo"}) // -race on a busy machine: a 6 MB body is slow to read
	evs, err := collect(t, c, photoReq(imagefittest.Photo(4_500_000), "image/jpeg"))
	if err != nil {
		t.Fatalf("got %v, want the photo scaled to fit", err)
	}
	if text, _, _, _ := summarize(evs); text != "a photo" {
		t.Errorf("got %q", text)
	}
	imgs := sentImages(t, script.Requests()[0].Body)
	if len(imgs) != 1 || len(imgs[0]) > 5<<20 {
		t.Errorf("sent %d images, want one within 5 MB of base64", len(imgs))
	}
}

// TestUnfittableImageLeftOut: an image past the limit that reef cannot convert (a WebP) is
// left out with a note in the text, and the request goes through.
func TestUnfittableImageLeftOut(t *testing.T) {
	c, script := setup(t, fake.Reply{Text: "ok"})
	if _, err := collect(t, c, photoReq(make([]byte, 4<<20), "image/webp")); err != nil {
		t.Fatalf("got %v, want the request without the image", err)
	}
	got := script.Requests()[0]
	if imgs := sentImages(t, got.Body); len(imgs) != 0 {
		t.Errorf("sent %d images, want none", len(imgs))
	}
	if m := got.Messages[0].Content; !strings.Contains(m, "not sent to the model") {
		t.Errorf("got text %q, want a note that the image was not sent", m)
	}
}
