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
