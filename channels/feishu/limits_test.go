package feishu_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// pngOf returns the start of a PNG of w×h pixels (signature and IHDR: what a decoder reads
// for the size), padded to n bytes.
func pngOf(w, h, n int) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	for b.Len() < n {
		b.WriteByte(0)
	}
	return b.Bytes()
}

// TestRetriedImageUploadSendsTheWholeImage: an image upload answered 429 is sent again
// whole; before, the retry sent an exhausted reader, which the platform refuses (#33 point 2).
func TestRetriedImageUploadSendsTheWholeImage(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	ws := t.TempDir()
	chart := pngOf(800, 600, 4000)
	os.WriteFile(filepath.Join(ws, "chart.png"), chart, 0o644)
	srv.FailNext("image", 429)
	if _, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Media: []messages.Media{{Root: ws, Path: "chart.png"}}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.Messages()
	if len(got) != 1 || got[0].MsgType != "image" || !bytes.Equal(got[0].File, chart) {
		t.Errorf("messages %+v, want chart.png as an image, whole", got)
	}
	if n := srv.Requests("image"); n != 2 {
		t.Errorf("%d image uploads, want 2 (the 429, then the retry)", n)
	}
}

// TestImageOverResolutionGoesAsFile: an image over the image upload's resolution limit (a
// 13000-pixel-long screenshot) goes as a file, whole, instead of being refused (#33 point 3).
func TestImageOverResolutionGoesAsFile(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	ws := t.TempDir()
	page := pngOf(1280, 13000, 4000)
	os.WriteFile(filepath.Join(ws, "page.png"), page, 0o644)
	if _, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Media: []messages.Media{{Root: ws, Path: "page.png"}}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.Messages()
	if len(got) != 1 || got[0].MsgType != "file" || got[0].FileName != "page.png" || !bytes.Equal(got[0].File, page) {
		t.Errorf("messages %+v, want page.png as a file, whole", got)
	}
}
