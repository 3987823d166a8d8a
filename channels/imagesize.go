package channels

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
)

// ImageSize reads the format ("png", "jpeg", "gif", "webp") and the width and height in
// pixels from the header of an image, without decoding it. ok is false when r holds none of
// these formats or its header is damaged.
func ImageSize(r io.Reader) (format string, width, height int, ok bool) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(30)
	var decode func(io.Reader) (image.Config, error)
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		format, decode = "png", png.DecodeConfig
	case bytes.HasPrefix(head, []byte("\xff\xd8")):
		format, decode = "jpeg", jpeg.DecodeConfig
	case bytes.HasPrefix(head, []byte("GIF8")):
		format, decode = "gif", gif.DecodeConfig
	case len(head) >= 30 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		width, height, ok = webpSize(head)
		return "webp", width, height, ok
	default:
		return "", 0, 0, false
	}
	c, err := decode(br)
	if err != nil {
		return "", 0, 0, false
	}
	return format, c.Width, c.Height, true
}

// webpSize reads a WebP's canvas size from its first 30 bytes (VP8, VP8L or VP8X chunk).
func webpSize(h []byte) (width, height int, ok bool) {
	u24 := func(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 }
	switch string(h[12:16]) {
	case "VP8X":
		return u24(h[24:27]) + 1, u24(h[27:30]) + 1, true
	case "VP8 ":
		if h[23] != 0x9d || h[24] != 0x01 || h[25] != 0x2a {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint16(h[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(h[28:30]) & 0x3fff), true
	case "VP8L":
		if h[20] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(h[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	}
	return 0, 0, false
}
