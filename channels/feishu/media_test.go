package feishu_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/messages"
)

// TestInboundFilesDownload: image, file and voice messages arrive as Media, and Fetch
// downloads each from GET /open-apis/im/v1/messages/{id}/resources/{key}.
func TestInboundFilesDownload(t *testing.T) {
	srv, bot, box := wsBot(t, zerolog.Nop())
	photo := bytes.Repeat([]byte{0xff, 0xd8}, 700)
	tests := []struct {
		send func() string
		kind messages.MediaKind
		name string
		data []byte
	}{
		{func() string { return srv.UserSendsImage("oc_dm", "ou_alice", photo) }, messages.MediaImage, "", photo},
		{func() string { return srv.UserSendsFile("oc_dm", "ou_alice", "notes.md", []byte("# todo")) }, messages.MediaDocument, "notes.md", []byte("# todo")},
		{func() string { return srv.UserSendsAudio("oc_dm", "ou_alice", []byte("opus")) }, messages.MediaVoice, "voice.ogg", []byte("opus")},
	}
	for _, tt := range tests {
		mid := tt.send()
		in := box.next(t)
		if len(in.Media) != 1 || in.Media[0].Kind != tt.kind || in.Media[0].Name != tt.name || !strings.HasPrefix(in.Media[0].Ref, mid+"/") {
			t.Errorf("%s: media %+v", tt.kind, in.Media)
			continue
		}
		body, err := bot.Fetch(context.Background(), in.Media[0])
		if err != nil {
			t.Errorf("%s: fetch: %v", tt.kind, err)
			continue
		}
		data, _ := io.ReadAll(body)
		body.Close()
		if !bytes.Equal(data, tt.data) {
			t.Errorf("%s: downloaded %q, want %q", tt.kind, data, tt.data)
		}
	}
	if _, err := bot.Fetch(context.Background(), messages.Media{Ref: "om_x/img_none/image"}); err == nil {
		t.Error("fetching an unknown resource succeeded")
	}
}

// TestInboundPostWithImages: a rich-text post with text and two images arrives with its text
// and both images as Media, each downloaded from the post's message resources; an image key
// of another message is refused, as the platform does.
func TestInboundPostWithImages(t *testing.T) {
	srv, bot, box := wsBot(t, zerolog.Nop())
	cat := append([]byte{0xff, 0xd8, 0xff, 0xe0}, bytes.Repeat([]byte{1}, 400)...)
	dog := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{2}, 500)...)
	mid := srv.UserSendsPost("oc_dm", "ou_alice", "Pets", "which one is cuter?", cat, dog)
	in := box.next(t)
	if !strings.Contains(in.Text, "Pets") || !strings.Contains(in.Text, "which one is cuter?") || strings.Count(in.Text, "[image]") != 2 {
		t.Errorf("text %q, want the title, the text and where the two images were", in.Text)
	}
	if len(in.Media) != 2 {
		t.Fatalf("media %+v, want the two images", in.Media)
	}
	for i, want := range [][]byte{cat, dog} {
		m := in.Media[i]
		if m.Kind != messages.MediaImage || !strings.HasPrefix(m.Ref, mid+"/") || !strings.HasSuffix(m.Ref, "/image") {
			t.Errorf("image %d: %+v, want an image resource of %s", i, m, mid)
			continue
		}
		body, err := bot.Fetch(context.Background(), m)
		if err != nil {
			t.Errorf("image %d: fetch: %v", i, err)
			continue
		}
		data, _ := io.ReadAll(body)
		body.Close()
		if !bytes.Equal(data, want) {
			t.Errorf("image %d: downloaded %d bytes, want %d", i, len(data), len(want))
		}
	}
	if n := srv.Downloads(); n != 2 {
		t.Errorf("%d downloads, want 2", n)
	}
	other := srv.UserSays("oc_dm", "ou_alice", "hi")
	box.next(t)
	_, key, _ := strings.Cut(in.Media[0].Ref, "/")
	if _, err := bot.Fetch(context.Background(), messages.Media{Ref: other + "/" + key}); err == nil {
		t.Error("an image key fetched through another message was served")
	}
}

// TestSendUploadsFiles: a reply's image is uploaded to /im/v1/images and sent as an image
// message, a document to /im/v1/files and sent as a file message; a path outside the
// workspace is refused with a note.
func TestSendUploadsFiles(t *testing.T) {
	srv, bot := sendBot(t, feishutest.Config{})
	ws := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{9}, 300)...)
	os.WriteFile(filepath.Join(ws, "chart.png"), png, 0o644)
	os.WriteFile(filepath.Join(ws, "report.pdf"), []byte("%PDF-1.4 report"), 0o644)
	ids, err := bot.Send(context.Background(), messages.Outbound{ChatID: "oc_dm", Text: "done", Media: []messages.Media{
		{Root: ws, Path: "chart.png"}, {Root: ws, Path: "report.pdf"}, {Root: ws, Path: "/etc/passwd"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 4 || len(ids) != 4 {
		t.Fatalf("%d messages (%d ids), want text, image, file and a note: %+v", len(got), len(ids), got)
	}
	if got[1].MsgType != "image" || !bytes.Equal(got[1].File, png) {
		t.Errorf("second message %s with %d bytes, want the image", got[1].MsgType, len(got[1].File))
	}
	if got[2].MsgType != "file" || got[2].FileName != "report.pdf" || string(got[2].File) != "%PDF-1.4 report" {
		t.Errorf("third message %s %q, want report.pdf as a file", got[2].MsgType, got[2].FileName)
	}
	if got[3].MsgType != "post" || !strings.Contains(got[3].Text, "not sent") {
		t.Errorf("fourth message %s %q, want a note that /etc/passwd was not sent", got[3].MsgType, got[3].Text)
	}
}
