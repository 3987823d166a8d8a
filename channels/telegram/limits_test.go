package telegram

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

// pngOf returns the start of a PNG of w×h pixels (signature and IHDR: what a decoder reads
// for the size), padded to n bytes.
func pngOf(w, h, n int) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
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

// TestRetriedUploadSendsTheWholeFile: an upload answered 429 is sent again whole; before,
// the second attempt read an exhausted stream and Telegram refused the empty file for good,
// dropping it (#33 point 2).
func TestRetriedUploadSendsTheWholeFile(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ws := t.TempDir()
	chart, report := pngOf(800, 600, 5000), bytes.Repeat([]byte("a,b\n"), 1000)
	os.WriteFile(filepath.Join(ws, "chart.png"), chart, 0o644)
	os.WriteFile(filepath.Join(ws, "report.csv"), report, 0o644)
	s.FailNext("sendPhoto", 429, 1)
	s.FailNext("sendDocument", 429, 1)
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "7", Media: []messages.Media{
		{Root: ws, Path: "chart.png"}, {Root: ws, Path: "report.csv"},
	}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := s.Messages(7)
	if len(got) != 2 || got[0].Kind != "photo" || !bytes.Equal(got[0].File, chart) || got[1].Kind != "document" || !bytes.Equal(got[1].File, report) {
		var kinds []string
		for _, m := range got {
			kinds = append(kinds, m.Kind+" "+m.FileName+" "+m.Text)
		}
		t.Errorf("chat shows %q, want chart.png as a photo and report.csv as a document, each whole", kinds)
	}
}

// TestPhotoOutsideSendPhotoRulesGoesAsDocument: a full-page screenshot (1280×12000: width
// plus height over 10,000) and a banner (4000×100: ratio over 20) go as documents, whole;
// an ordinary chart still goes as a photo (#33 point 3).
func TestPhotoOutsideSendPhotoRulesGoesAsDocument(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ws := t.TempDir()
	files := map[string][]byte{"page.png": pngOf(1280, 12000, 3000), "banner.png": pngOf(4000, 100, 3000), "chart.png": pngOf(1200, 800, 3000)}
	for name, data := range files {
		os.WriteFile(filepath.Join(ws, name), data, 0o644)
	}
	if _, err := b.Send(context.Background(), messages.Outbound{ChatID: "7", Text: "shots", Media: []messages.Media{
		{Root: ws, Path: "page.png"}, {Root: ws, Path: "banner.png"}, {Root: ws, Path: "chart.png"},
	}}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := s.Messages(7)
	want := []struct{ kind, name string }{{"", ""}, {"document", "page.png"}, {"document", "banner.png"}, {"photo", "chart.png"}}
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].FileName != w.name || w.name != "" && !bytes.Equal(got[i].File, files[w.name]) {
			t.Errorf("message %d: %s %q (%d bytes), want %s %q whole", i, got[i].Kind, got[i].FileName, len(got[i].File), w.kind, w.name)
		}
	}
}

// TestFetchOverTwentyMB: a file over the 20 MB bots may download is refused for good
// (channels.ErrPermanent: not worth trying again), at once when its size is known, and when
// getFile says it is too big otherwise.
func TestFetchOverTwentyMB(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	in := newInbox()
	cancel, _ := run(t, b, in.deliver)
	defer cancel()
	s.UserSendsDocument(42, 42, "scan.pdf", "application/pdf", []byte("%PDF"), 30<<20)
	m := in.next(t).Media[0]
	if _, err := b.Fetch(context.Background(), m); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("Fetch of a 30 MB file = %v, want a permanent refusal", err)
	}
	if n := s.Calls("getFile"); n != 0 {
		t.Errorf("getFile called %d times for a file announced over 20 MB, want 0", n)
	}
	m.Size = 0 // not announced
	if _, err := b.Fetch(context.Background(), m); !errors.Is(err, channels.ErrPermanent) || !strings.Contains(err.Error(), "20 MB") {
		t.Errorf("Fetch of an unannounced 30 MB file = %v, want a permanent refusal naming the 20 MB limit", err)
	}
}
