package imagefit_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/color/palette"
	"image/gif"
	"image/png"
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/internal/imagefit"
	"github.com/reefgw/reef/providers/internal/imagefit/imagefittest"
)

// TestPhotoOverAnthropicsBase64Limit: a 4.5 MB photograph is under 5 MiB raw but over
// Anthropic's 5 MB of base64; it is scaled down to fit and stays a JPEG.
func TestPhotoOverAnthropicsBase64Limit(t *testing.T) {
	photo := imagefittest.Photo(4_500_000)
	if n := base64.StdEncoding.EncodedLen(len(photo)); n <= imagefit.Anthropic.MaxBase64 || len(photo) > 5<<20 {
		t.Fatalf("test photo: %d bytes, %d of base64: want under 5 MiB raw, over the limit in base64", len(photo), n)
	}
	out, mime, err := imagefit.Fit(photo, "image/jpeg", imagefit.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	if n := base64.StdEncoding.EncodedLen(len(out)); n > imagefit.Anthropic.MaxBase64 || mime != "image/jpeg" {
		t.Errorf("got %s of %d bytes of base64, want a JPEG within %d", mime, n, imagefit.Anthropic.MaxBase64)
	}
	if _, _, err := image.Decode(bytes.NewReader(out)); err != nil {
		t.Errorf("the fitted image does not decode: %v", err)
	}
}

// TestGIFForGemini: Gemini takes no GIF: an animated GIF becomes a PNG of its first frame.
func TestGIFForGemini(t *testing.T) {
	out, mime, err := imagefit.Fit(imagefittest.AnimatedGIF(), "image/gif", imagefit.Gemini)
	if err != nil || mime != "image/png" {
		t.Fatalf("got %s, %v; want image/png", mime, err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, b, _ := img.At(5, 5).RGBA(); r>>8 < 200 || g>>8 > 50 || b>>8 > 50 {
		t.Errorf("got colour %d,%d,%d, want the first frame's red", r>>8, g>>8, b>>8)
	}
	if got, _, _ := imagefit.Fit(imagefittest.AnimatedGIF(), "image/gif", imagefit.Anthropic); !bytes.Equal(got, imagefittest.AnimatedGIF()) {
		t.Error("Anthropic takes GIFs: the GIF should go as it is")
	}
}

// TestSidesBounded: an image wider than Anthropic's 8000 px is scaled to 8000.
func TestSidesBounded(t *testing.T) {
	out, _, err := imagefit.Fit(imagefittest.PNG(9000, 60), "image/png", imagefit.Anthropic)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(out))
	if err != nil || cfg.Width > 8000 || cfg.Width < 7900 {
		t.Errorf("got %dx%d (%v), want 8000 px wide at most", cfg.Width, cfg.Height, err)
	}
}

// TestUnreadableLeftOutWithNote: an image past the limit that reef cannot decode loses its
// bytes, and its message says so; a message whose images fit is not copied.
func TestUnreadableLeftOutWithNote(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 5<<20)
	msgs := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "ok", Media: []messages.Media{{Kind: messages.MediaImage, MIME: "image/png", Path: "inbox/a.png", Data: imagefittest.PNG(10, 10)}}},
		{Role: messages.RoleUser, Content: "look", Media: []messages.Media{{Kind: messages.MediaImage, MIME: "image/webp", Path: "inbox/b.webp", Data: big}}},
	}
	out := imagefit.Messages(msgs, imagefit.Anthropic)
	if len(out[1].Media[0].Data) != 0 || !strings.Contains(out[1].Content, "[image inbox/b.webp not sent to the model") {
		t.Errorf("got %d bytes and text %q, want no bytes and a note", len(out[1].Media[0].Data), out[1].Content)
	}
	if len(msgs[1].Media[0].Data) == 0 {
		t.Error("the caller's message was changed")
	}
	if &out[0].Media[0] != &msgs[0].Media[0] {
		t.Error("a message whose images fit was copied")
	}
	if _, _, err := imagefit.Fit(big, "image/webp", imagefit.Anthropic); !errors.Is(err, imagefit.ErrUnreadable) {
		t.Errorf("got %v, want ErrUnreadable", err)
	}
}

// TestAnimatedGIFForOpenAI: OpenAI takes GIFs, but not animated ones: the first frame goes
// as a PNG; a still GIF goes as it is.
func TestAnimatedGIFForOpenAI(t *testing.T) {
	_, mime, err := imagefit.Fit(imagefittest.AnimatedGIF(), "image/gif", imagefit.OpenAI)
	if err != nil || mime != "image/png" {
		t.Errorf("animated: got %s, %v; want image/png", mime, err)
	}
	var still bytes.Buffer
	gif.Encode(&still, image.NewPaletted(image.Rect(0, 0, 4, 4), palette.Plan9), nil)
	if out, mime, _ := imagefit.Fit(still.Bytes(), "image/gif", imagefit.OpenAI); mime != "image/gif" || !bytes.Equal(out, still.Bytes()) {
		t.Errorf("still: got %s, want the GIF as it is", mime)
	}
}
