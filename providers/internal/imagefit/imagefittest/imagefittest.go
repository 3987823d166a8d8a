// Package imagefittest makes images for tests of the providers' image limits: a photograph
// of a given size in bytes, an animated GIF, an image of given sides.
package imagefittest

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
)

// Photo returns a JPEG of noise (it compresses as badly as a detailed photograph) of at
// least size bytes, and not much more. Quality 100 makes it few pixels for its bytes, so it
// is quick to make and to convert.
func Photo(size int) []byte {
	sample := encodeNoise(128, 128)
	perPixel := float64(len(sample)) / (128 * 128)
	side := int(math.Sqrt(float64(size)/perPixel)) + 1
	for {
		b := encodeNoise(side, side)
		if len(b) >= size {
			return b
		}
		side += max(8, side/50)
	}
}

func encodeNoise(w, h int) []byte {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.Uint32())
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, img, &jpeg.Options{Quality: 100})
	return buf.Bytes()
}

// PNG returns a plain PNG of w×h pixels.
func PNG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// AnimatedGIF returns a two-frame GIF of 40×30 pixels; its first frame is red.
func AnimatedGIF() []byte {
	frame := func(c color.Color) *image.Paletted {
		img := image.NewPaletted(image.Rect(0, 0, 40, 30), palette.Plan9)
		for y := 0; y < 30; y++ {
			for x := 0; x < 40; x++ {
				img.Set(x, y, c)
			}
		}
		return img
	}
	var buf bytes.Buffer
	gif.EncodeAll(&buf, &gif.GIF{Image: []*image.Paletted{frame(color.RGBA{255, 0, 0, 255}), frame(color.RGBA{0, 0, 255, 255})}, Delay: []int{10, 10}})
	return buf.Bytes()
}
