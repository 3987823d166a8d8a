package telegram

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/messages"
)

func TestFetchDownloadsThroughGetFile(t *testing.T) {
	s := telegramtest.New(t)
	b, logs := newTestBot(t, s, nil)
	in := newInbox()
	cancel, _ := run(t, b, in.deliver)
	defer cancel()
	photo := bytes.Repeat([]byte{0xff, 0xd8, 0xff}, 1000)
	s.UserSendsPhoto(42, 42, photo, "what is this?")
	got := in.next(t)
	if got.Text != "what is this?" || len(got.Media) != 1 {
		t.Fatalf("inbound = %q with %d files, want the caption and one photo", got.Text, len(got.Media))
	}
	m := got.Media[0]
	if m.Kind != messages.MediaImage || m.Size != int64(len(photo)) {
		t.Errorf("media = %+v, want the full-size image", m)
	}
	body, err := b.Fetch(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	if !bytes.Equal(data, photo) {
		t.Errorf("downloaded %d bytes, want the %d of the photo", len(data), len(photo))
	}
	if _, err := b.Fetch(context.Background(), messages.Media{Ref: "no-such-file"}); err == nil {
		t.Error("fetching an unknown file_id succeeded")
	} else {
		assertNoToken(t, "fetch error", err.Error())
	}
	assertNoToken(t, "logs", logs.String())
}

func TestSendMediaByKind(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ws := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 500)...)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(ws, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("chart.png", png)
	write("report.csv", []byte("a,b\n1,2\n"))
	write("note.ogg", []byte("OggS"))
	ids, err := b.Send(context.Background(), messages.Outbound{ChatID: "7", ReplyToID: "7:3", Text: "here you go", Media: []messages.Media{
		{Root: ws, Path: "chart.png", Kind: messages.MediaImage},
		{Root: ws, Path: "report.csv"},
		{Root: ws, Path: "note.ogg"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Messages(7)
	if len(got) != 4 || len(ids) != 4 {
		t.Fatalf("sent %d messages (%d ids), want text + 3 files: %+v", len(got), len(ids), got)
	}
	for i, want := range []struct{ kind, name string }{{"", ""}, {"photo", "chart.png"}, {"document", "report.csv"}, {"voice", "note.ogg"}} {
		if got[i].Kind != want.kind || got[i].FileName != want.name {
			t.Errorf("message %d: %s %q, want %s %q", i, got[i].Kind, got[i].FileName, want.kind, want.name)
		}
	}
	if !bytes.Equal(got[1].File, png) {
		t.Errorf("the photo arrived as %d bytes, want the %d of chart.png", len(got[1].File), len(png))
	}
	if got[0].ReplyTo != 3 || got[1].ReplyTo != 0 {
		t.Errorf("replies to %d, %d: only the first message should reply", got[0].ReplyTo, got[1].ReplyTo)
	}
}

func TestSendMediaRefusesFilesOutsideTheWorkspace(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	if err := os.Symlink(secret, filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(ws, "big.bin")
	f, _ := os.Create(big)
	f.Truncate(telegramtest.MaxFileUpload + 1)
	f.Close()
	for _, path := range []string{"../" + filepath.Base(outside) + "/secret.txt", "link.txt", "missing.png", "big.bin"} {
		_, err := b.Send(context.Background(), messages.Outbound{ChatID: "8", Media: []messages.Media{{Root: ws, Path: path}}})
		if err != nil {
			t.Errorf("%s: Send = %v, want a note in the chat instead", path, err)
		}
	}
	got := s.Messages(8)
	if len(got) != 4 {
		t.Fatalf("%d messages, want one note per refused file: %+v", len(got), got)
	}
	for _, m := range got {
		if m.Kind != "" || !strings.Contains(m.Text, "not sent") || strings.Contains(m.Text, "top secret") {
			t.Errorf("message %+v, want a text note that the file was not sent", m)
		}
	}
}

// TestInboundVideos: a video, a round video note and an animation (which Telegram also
// announces as a document) arrive as one video each, with the name, type and size Telegram
// gave, and download through getFile.
func TestInboundVideos(t *testing.T) {
	s := telegramtest.New(t)
	b, logs := newTestBot(t, s, nil)
	in := newInbox()
	cancel, _ := run(t, b, in.deliver)
	defer cancel()
	clip := append([]byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte{3}, 700)...)
	note := append([]byte("\x00\x00\x00\x18ftypisom"), bytes.Repeat([]byte{4}, 300)...)
	gif := append([]byte("\x00\x00\x00\x18ftypmp41"), bytes.Repeat([]byte{5}, 200)...)
	tests := []struct {
		send       func()
		name, mime string
		data       []byte
	}{
		{func() { s.UserSendsVideo(42, 42, "holiday.mp4", clip, 0) }, "holiday.mp4", "video/mp4", clip},
		{func() { s.UserSendsVideoNote(42, 42, note) }, "", "video/mp4", note},
		{func() { s.UserSendsAnimation(42, 42, "dance.gif.mp4", gif) }, "dance.gif.mp4", "video/mp4", gif},
	}
	for _, tt := range tests {
		tt.send()
		got := in.next(t)
		if len(got.Media) != 1 {
			t.Errorf("%q: %d files, want one video: %+v", tt.name, len(got.Media), got.Media)
			continue
		}
		m := got.Media[0]
		if m.Kind != messages.MediaVideo || m.Name != tt.name || m.MIME != tt.mime || m.Size != int64(len(tt.data)) {
			t.Errorf("media = %+v, want video %q %s of %d bytes", m, tt.name, tt.mime, len(tt.data))
		}
		body, err := b.Fetch(context.Background(), m)
		if err != nil {
			t.Errorf("%q: fetch: %v", tt.name, err)
			continue
		}
		data, _ := io.ReadAll(body)
		body.Close()
		if !bytes.Equal(data, tt.data) {
			t.Errorf("%q: downloaded %d bytes, want %d", tt.name, len(data), len(tt.data))
		}
	}
	assertNoToken(t, "logs", logs.String())
}

// TestSendVideo: a reply's .mp4, .mov and .webm go out by sendVideo (multipart, the file
// under "video"), as does a file whose kind or MIME type says video; a .gif stays a document.
func TestSendVideo(t *testing.T) {
	s := telegramtest.New(t)
	b, _ := newTestBot(t, s, nil)
	ws := t.TempDir()
	clip := append([]byte("\x00\x00\x00\x18ftypmp42"), bytes.Repeat([]byte{6}, 900)...)
	for _, name := range []string{"clip.mp4", "phone.MOV", "screen.webm", "recording.bin", "anim.gif"} {
		if err := os.WriteFile(filepath.Join(ws, name), clip, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := b.Send(context.Background(), messages.Outbound{ChatID: "9", ReplyToID: "9:4", Media: []messages.Media{
		{Root: ws, Path: "clip.mp4"}, {Root: ws, Path: "phone.MOV"}, {Root: ws, Path: "screen.webm"},
		{Root: ws, Path: "recording.bin", MIME: "video/mp4"}, {Root: ws, Path: "anim.gif"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Messages(9)
	want := []struct{ kind, name string }{{"video", "clip.mp4"}, {"video", "phone.MOV"}, {"video", "screen.webm"},
		{"video", "recording.bin"}, {"document", "anim.gif"}}
	if len(got) != len(want) {
		t.Fatalf("sent %d messages, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].FileName != w.name || !bytes.Equal(got[i].File, clip) {
			t.Errorf("message %d: %s %q (%d bytes), want %s %q with the file", i, got[i].Kind, got[i].FileName, len(got[i].File), w.kind, w.name)
		}
	}
	if got[0].ReplyTo != 4 {
		t.Errorf("the first video replies to %d, want 4", got[0].ReplyTo)
	}
}
