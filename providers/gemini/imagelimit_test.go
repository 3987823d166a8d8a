package gemini_test

import (
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/internal/imagefit/imagefittest"
)

// TestGIFSentAsPNG: Gemini refuses image/gif; a GIF goes as a PNG of its first frame and the
// request is answered (#33.7).
func TestGIFSentAsPNG(t *testing.T) {
	c, script, _ := setup(t, fake.Reply{Text: "a red square"})
	req := providers.Request{Model: "gemini-fake", Messages: []messages.ChatMessage{{Role: messages.RoleUser,
		Content: "what is this? [image: inbox/a.gif]", Media: []messages.Media{{Kind: messages.MediaImage, MIME: "image/gif", Path: "inbox/a.gif", Data: imagefittest.AnimatedGIF()}}}}}
	evs, err := collect(t, c, req)
	if err != nil {
		t.Fatalf("got %v, want the GIF sent as a PNG", err)
	}
	if text, _, _, _ := summarize(evs); text != "a red square" {
		t.Errorf("got %q", text)
	}
	var mimes []string
	for _, m := range script.Requests()[0].Messages {
		for _, md := range m.Media {
			mimes = append(mimes, md.MIME)
		}
	}
	if len(mimes) != 1 || mimes[0] != "image/png" {
		t.Errorf("sent images %v, want one image/png", mimes)
	}
}
