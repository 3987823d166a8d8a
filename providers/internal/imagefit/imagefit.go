// Package imagefit bounds the images a client sends by its provider's real limits: a type
// the provider does not take is converted (a GIF becomes a PNG of its first frame), and an
// image too large in bytes or pixels is scaled down, with the standard library's codecs.
// An image that cannot be made to fit is left out, with a note in the message's text, so
// that one image never makes every later request of a conversation fail.
package imagefit

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"sync"

	"github.com/reefgw/reef/messages"
)

// Limits are what one provider takes of one image.
type Limits struct {
	Name      string          // the provider's name, in notes and as part of the cache key
	Types     map[string]bool // MIME types taken as they are
	MaxBase64 int             // the longest base64 text of one image
	MaxSide   int             // the largest width or height in pixels; 0 for no limit
}

// Known limits. Anthropic: 5 MB of base64 (5,242,880 characters: a raw image of 3.75 MiB
// or more is refused), at most 8000 px a side, JPEG, PNG, GIF, WebP. Gemini: PNG, JPEG,
// WebP, HEIC, HEIF (no GIF), and 20 MB for the whole request, so reef sends each image in
// at most 4 MiB of base64 (the 4 latest images then fit). OpenAI: PNG, JPEG, WebP, GIF
// (not animated), 50 MB per request; reef sends each image in at most 10 MiB of base64.
var (
	Anthropic = Limits{Name: "anthropic", MaxBase64: 5 << 20, MaxSide: 8000,
		Types: map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}}
	Gemini = Limits{Name: "gemini", MaxBase64: 4 << 20,
		Types: map[string]bool{"image/jpeg": true, "image/png": true, "image/webp": true, "image/heic": true, "image/heif": true}}
	OpenAI = Limits{Name: "openai", MaxBase64: 10 << 20,
		Types: map[string]bool{"image/jpeg": true, "image/png": true, "image/webp": true, "image/gif": true}}
)

// Messages returns msgs with every image that carries bytes fitted to lim. The entries it
// changes are copies; an image that cannot be fitted loses its bytes and its message's text
// says why.
func Messages(msgs []messages.ChatMessage, lim Limits) []messages.ChatMessage {
	var out []messages.ChatMessage
	for i, m := range msgs {
		var media []messages.Media
		var notes string
		for j, md := range m.Media {
			if md.Kind != messages.MediaImage || len(md.Data) == 0 {
				continue
			}
			data, mime, err := Fit(md.Data, md.MIME, lim)
			if err == nil && mime == md.MIME && len(data) == len(md.Data) {
				continue
			}
			if media == nil {
				media = append([]messages.Media(nil), m.Media...)
			}
			if err != nil {
				media[j].Data = nil
				notes += fmt.Sprintf("\n[image %s not sent to the model: %v]", md.Path, err)
				continue
			}
			media[j].Data, media[j].MIME = data, mime
		}
		if media == nil {
			continue
		}
		if out == nil {
			out = append([]messages.ChatMessage(nil), msgs...)
		}
		m.Media, m.Content = media, m.Content+notes
		out[i] = m
	}
	if out == nil {
		return msgs
	}
	return out
}

// Fit returns data as an image lim takes: unchanged when it already fits, else converted
// and scaled down. It fails for an image it cannot decode that does not fit as it is.
func Fit(data []byte, mime string, lim Limits) ([]byte, string, error) {
	if fits(data, mime, lim) {
		return data, mime, nil
	}
	key := cacheKey(data, mime, lim)
	if r, ok := cache.get(key); ok {
		return r.data, r.mime, r.err
	}
	out, outMIME, err := convert(data, lim)
	cache.put(key, result{out, outMIME, err})
	return out, outMIME, err
}

// fits reports whether data goes as it is: a type lim takes, its base64 within the bound,
// and (when it can be read) its sides within the bound.
func fits(data []byte, mime string, lim Limits) bool {
	if !lim.Types[mime] || base64.StdEncoding.EncodedLen(len(data)) > lim.MaxBase64 {
		return false
	}
	if mime == "image/gif" && lim.Name == "openai" && animated(data) {
		return false // OpenAI takes only non-animated GIFs
	}
	if lim.MaxSide == 0 {
		return true
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	return err != nil || (cfg.Width <= lim.MaxSide && cfg.Height <= lim.MaxSide) // WebP cannot be read: sent as it is
}

// animated reports whether a GIF has more than one frame. Decoding every frame is slow and
// a conversation sends its images again with each request: the answer is cached.
func animated(data []byte) bool {
	key := cacheKey(data, "image/gif", Limits{Name: "animated"})
	if r, ok := cache.get(key); ok {
		return r.mime == "animated"
	}
	g, err := gif.DecodeAll(bytes.NewReader(data))
	yes := err == nil && len(g.Image) > 1
	cache.put(key, result{mime: map[bool]string{true: "animated", false: "still"}[yes]})
	return yes
}

// ErrUnreadable is returned for an image that does not fit and cannot be decoded (a WebP
// or HEIC past the bound: the standard library reads JPEG, PNG and GIF).
var ErrUnreadable = errors.New("the image does not fit the provider's limits and reef cannot convert its format")

// convert decodes data (a GIF's first frame), scales it to fit lim and encodes it: JPEG for
// a photograph (a JPEG source, or a PNG that stays too large), PNG otherwise.
func convert(data []byte, lim Limits) ([]byte, string, error) {
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", ErrUnreadable
	}
	asJPEG := format == "jpeg"
	scale := 1.0
	if b := img.Bounds(); lim.MaxSide > 0 && max(b.Dx(), b.Dy()) > lim.MaxSide {
		scale = float64(lim.MaxSide) / float64(max(b.Dx(), b.Dy()))
	}
	for attempt := 0; attempt < 8; attempt++ {
		scaled := resize(img, scale)
		out, mime, err := encode(scaled, asJPEG)
		if err != nil {
			return nil, "", err
		}
		n := base64.StdEncoding.EncodedLen(len(out))
		if n <= lim.MaxBase64 && lim.Types[mime] {
			return out, mime, nil
		}
		if !asJPEG && attempt >= 1 && lim.Types["image/jpeg"] {
			asJPEG = true // a PNG that stays too large is a photograph
			continue
		}
		scale *= math.Sqrt(float64(lim.MaxBase64)/float64(n)) * 0.9
	}
	return nil, "", fmt.Errorf("the image stays over %s's limit of %d bytes of base64", lim.Name, lim.MaxBase64)
}

func encode(img image.Image, asJPEG bool) ([]byte, string, error) {
	var buf bytes.Buffer
	if asJPEG {
		err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85})
		return buf.Bytes(), "image/jpeg", err
	}
	err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, img)
	return buf.Bytes(), "image/png", err
}

// resize scales img by scale (at most 1) with a box filter: each pixel is the average of
// the source pixels it covers.
func resize(img image.Image, scale float64) image.Image {
	b := img.Bounds()
	src := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(src, src.Bounds(), img, b.Min, draw.Src)
	if scale >= 1 {
		return src
	}
	w, h := max(1, int(float64(b.Dx())*scale)), max(1, int(float64(b.Dy())*scale))
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sw, sh := b.Dx(), b.Dy()
	for y := 0; y < h; y++ {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := 0; x < w; x++ {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var r, g, bl, a, n uint32
			for sy := y0; sy < y1; sy++ {
				row := src.Pix[sy*src.Stride:]
				for sx := x0; sx < x1; sx++ {
					p := row[sx*4 : sx*4+4]
					r, g, bl, a = r+uint32(p[0]), g+uint32(p[1]), bl+uint32(p[2]), a+uint32(p[3])
					n++
				}
			}
			d := dst.Pix[y*dst.Stride+x*4:]
			d[0], d[1], d[2], d[3] = uint8(r/n), uint8(g/n), uint8(bl/n), uint8(a/n)
		}
	}
	return dst
}

// The cache keeps the latest conversions: a conversation sends its latest images again with
// every request, and converting a photograph takes a good part of a second.
type result struct {
	data []byte
	mime string
	err  error
}

type lru struct {
	mu    sync.Mutex
	keys  []string
	items map[string]result
}

const cacheSize = 16

var cache = &lru{items: map[string]result{}}

func cacheKey(data []byte, mime string, lim Limits) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s|%d|%d|%s|%x", lim.Name, lim.MaxBase64, lim.MaxSide, mime, sum)
}

func (c *lru) get(key string) (result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.items[key]
	return r, ok
}

func (c *lru) put(key string, r result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	if len(c.keys) >= cacheSize {
		delete(c.items, c.keys[0])
		c.keys = c.keys[1:]
	}
	c.keys = append(c.keys, key)
	c.items[key] = r
}
