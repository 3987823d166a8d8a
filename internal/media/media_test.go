package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
)

func TestSafeName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd", "passwd"},
		{`..\..\boot.ini`, "boot.ini"},
		{".bashrc", "bashrc"},
		{"a b\tc\x00d.txt", "a_b_c_d.txt"},
		{"$(rm -rf).sh", "(rm_-rf).sh"},
		{"", "file"},
		{"..", "file"},
		{"/", "file"},
		{strings.Repeat("é", 200) + ".png", strings.Repeat("é", 58) + ".png"},
	} {
		if got := SafeName(c.in, "file"); got != c.want {
			t.Errorf("SafeName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestOutbound(t *testing.T) {
	ws := "/home/me/ws"
	for _, c := range []struct {
		ref, path, url string
		err            bool
	}{
		{ref: "chart.png", path: "chart.png"},
		{ref: "./out/chart.png", path: "out/chart.png"},
		{ref: "/home/me/ws/out/a.pdf", path: "out/a.pdf"},
		{ref: "https://example.com/x/cat.jpg", url: "https://example.com/x/cat.jpg"},
		{ref: "../secret", err: true},
		{ref: "out/../../secret", err: true},
		{ref: "/etc/passwd", err: true},
		{ref: "~/.ssh/id_rsa", err: true},
		{ref: "/home/me/wsx/a", err: true},
		{ref: "", err: true},
	} {
		m, err := Outbound(ws, c.ref)
		switch {
		case c.err:
			if err == nil {
				t.Errorf("Outbound(%q) = %+v, want an error", c.ref, m)
			}
		case err != nil:
			t.Errorf("Outbound(%q): %v", c.ref, err)
		case c.url != "" && m.Ref != c.url, c.path != "" && (m.Path != c.path || m.Root != ws):
			t.Errorf("Outbound(%q) = %+v", c.ref, m)
		}
	}
}

// opener serves data for every file and counts calls; the first fails fail times.
type opener struct {
	data  []byte
	fail  int
	calls atomic.Int32
}

func (o *opener) open(context.Context, messages.Media) (io.ReadCloser, error) {
	if int(o.calls.Add(1)) <= o.fail {
		return nil, errors.New("connection reset")
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

func TestFetch(t *testing.T) {
	ws := t.TempDir()
	day := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	f := &Fetcher{Workspace: ws, Limits: Limits{Image: 100, Document: 1000}, Log: zerolog.Nop(), Backoff: time.Millisecond}
	img := &opener{data: bytes.Repeat([]byte{1}, 50), fail: 2} // two transient failures, then the file
	got := f.Fetch(context.Background(), day, []messages.Media{{Kind: messages.MediaImage, Name: "../../x.jpg", Ref: "a"}}, img.open)
	if got[0].Path == "" || !strings.HasPrefix(got[0].Path, "inbox/2026-11-26/") || strings.Contains(got[0].Path, "..") || got[0].Size != 50 {
		t.Fatalf("saved %+v, want a safe name under inbox/2026-11-26/", got[0])
	}
	if data, _ := os.ReadFile(filepath.Join(ws, got[0].Path)); len(data) != 50 {
		t.Errorf("the file holds %d bytes, want 50", len(data))
	}
	again := f.Fetch(context.Background(), day, []messages.Media{{Kind: messages.MediaImage, Name: "../../x.jpg", Ref: "a"}}, (&opener{data: img.data}).open)
	if again[0].Path != got[0].Path {
		t.Errorf("a retried download lands on %q, want the same file %q", again[0].Path, got[0].Path)
	}
	if parts, _ := filepath.Glob(filepath.Join(ws, "inbox", "*", "*.part")); len(parts) != 0 {
		t.Errorf("temporary files left: %v", parts)
	}

	// Announced over the cap: not downloaded at all. Lied about (or unknown): cut at the cap.
	big := &opener{data: bytes.Repeat([]byte{2}, 200)}
	got = f.Fetch(context.Background(), day, []messages.Media{
		{Kind: messages.MediaImage, Name: "huge.png", Size: 5000, Ref: "b"},
		{Kind: messages.MediaImage, Name: "sneaky.png", Ref: "c"},
	}, big.open)
	if big.calls.Load() != 1 {
		t.Errorf("%d downloads, want 1 (the announced size is checked first)", big.calls.Load())
	}
	for _, m := range got {
		if m.Path != "" || !strings.Contains(m.Note, "over the 100 B limit for image files") {
			t.Errorf("%s: %+v, want a note and no file", m.Name, m)
		}
	}
	if desc := Describe(got[:1]); !strings.Contains(desc, "huge.png (4.9 KB)") || !strings.Contains(desc, "not downloaded") {
		t.Errorf("Describe = %q, want the name, size and why", desc)
	}

	// A download that keeps failing gets a note; no channel to download from gets one too.
	got = f.Fetch(context.Background(), day, []messages.Media{{Kind: messages.MediaDocument, Name: "a.txt", Ref: "d"}}, (&opener{fail: 99}).open)
	if !strings.Contains(got[0].Note, "connection reset") {
		t.Errorf("failed download: %+v", got[0])
	}
	got = f.Fetch(context.Background(), day, []messages.Media{{Kind: messages.MediaDocument, Name: "a.txt", Ref: "e"}}, nil)
	if got[0].Note == "" {
		t.Errorf("no opener: %+v, want a note", got[0])
	}
}

func TestFetchReadsTextAndTranscribes(t *testing.T) {
	ws := t.TempDir()
	f := &Fetcher{Workspace: ws, Limits: Limits{InlineChars: 10}, Log: zerolog.Nop(), Transcriber: transcriber("hello there")}
	got := f.Fetch(context.Background(), time.Now(), []messages.Media{
		{Kind: messages.MediaDocument, Name: "notes.md", Ref: "n"},
		{Kind: messages.MediaDocument, Name: "scan.pdf", Ref: "p"},
		{Kind: messages.MediaVoice, MIME: "audio/ogg", Ref: "v"},
	}, func(_ context.Context, m messages.Media) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("# shopping list: milk, eggs, bread")), nil
	})
	if !strings.HasPrefix(got[0].Text, "# shopping") || !strings.Contains(got[0].Text, "cut at 10 characters") {
		t.Errorf("document text %q, want the first 10 characters and a note", got[0].Text)
	}
	if got[1].Text != "" {
		t.Errorf("a PDF was read as text: %q", got[1].Text)
	}
	if got[2].Text != "hello there" || !strings.HasSuffix(got[2].Path, ".ogg") {
		t.Errorf("voice %+v, want the transcript and an .ogg file", got[2])
	}
	desc := Describe(got)
	for _, want := range []string{"[file: inbox/", "content:]", "reef does not extract its text", "[voice message: inbox/", "transcript:]", "hello there"} {
		if !strings.Contains(desc, want) {
			t.Errorf("Describe lacks %q:\n%s", want, desc)
		}
	}
}

type transcriber string

func (s transcriber) Transcribe(_ context.Context, _, _ string, audio io.Reader) (string, error) {
	if _, err := io.ReadAll(audio); err != nil {
		return "", err
	}
	return string(s), nil
}

func TestLoadImages(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "inbox"), 0o755)
	var msgs []messages.ChatMessage
	for i := range 6 {
		name := "inbox/" + string(rune('a'+i)) + ".png"
		os.WriteFile(filepath.Join(ws, name), []byte{byte(i)}, 0o644)
		msgs = append(msgs, messages.ChatMessage{Role: messages.RoleUser, Media: []messages.Media{{Kind: messages.MediaImage, Path: name}}})
	}
	msgs = append(msgs, messages.ChatMessage{Role: messages.RoleUser, Media: []messages.Media{{Kind: messages.MediaImage, Path: "../outside.png"}}})
	got := LoadImages(ws, msgs)
	n := 0
	for i, m := range got {
		if len(m.Media[0].Data) > 0 {
			n++
			if i < 2 {
				t.Errorf("image %d loaded; only the latest %d should be", i, MaxImages)
			}
		}
		if len(msgs[i].Media[0].Data) > 0 {
			t.Errorf("LoadImages changed its input's entry %d", i)
		}
	}
	if n != MaxImages {
		t.Errorf("%d images loaded, want %d", n, MaxImages)
	}
}

// TestDescribeVideos: a saved video is named with its path, size and type; one over the cap
// with its name, size, type and why it was not downloaded.
func TestDescribeVideos(t *testing.T) {
	ws := t.TempDir()
	f := &Fetcher{Workspace: ws, Limits: Limits{Video: 100}, Log: zerolog.Nop()}
	clip := &opener{data: bytes.Repeat([]byte{1}, 80)}
	got := f.Fetch(context.Background(), time.Now(), []messages.Media{
		{Kind: messages.MediaVideo, Name: "clip.mp4", MIME: "video/mp4", Size: 80, Ref: "v1"},
		{Kind: messages.MediaVideo, Name: "film.mov", MIME: "video/quicktime", Size: 5000, Ref: "v2"},
	}, clip.open)
	if got[0].Path == "" || !strings.HasSuffix(got[0].Path, "clip.mp4") {
		t.Fatalf("the small video was not saved: %+v", got[0])
	}
	if clip.calls.Load() != 1 {
		t.Errorf("%d downloads, want 1 (the film is over the cap)", clip.calls.Load())
	}
	desc := Describe(got)
	for _, want := range []string{
		"[video: " + got[0].Path + " (80 B, video/mp4)]",
		"[video: film.mov (4.9 KB, video/quicktime), not downloaded: 4.9 KB is over the 100 B limit for video files]",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("Describe lacks %q:\n%s", want, desc)
		}
	}
}

type modelClient struct {
	model, mime string
	audio       []byte
}

func (c *modelClient) Transcribe(_ context.Context, model, mime string, audio []byte) (string, error) {
	c.model, c.mime, c.audio = model, mime, audio
	return "hi there", nil
}

// TestModelTranscriber: the whole file reaches the client with the model and type; a file
// over the cap is refused without a call.
func TestModelTranscriber(t *testing.T) {
	c := &modelClient{}
	tr := &ModelTranscriber{Client: c, Model: "gemini-2.5-flash", MaxBytes: 10}
	text, err := tr.Transcribe(context.Background(), "v.ogg", "audio/ogg", strings.NewReader("OggS-0123"))
	if err != nil || text != "hi there" {
		t.Fatalf("Transcribe = %q, %v", text, err)
	}
	if c.model != "gemini-2.5-flash" || c.mime != "audio/ogg" || string(c.audio) != "OggS-0123" {
		t.Errorf("the client got %q %q %q", c.model, c.mime, c.audio)
	}
	c.audio = nil
	if _, err := tr.Transcribe(context.Background(), "v.ogg", "audio/ogg", strings.NewReader("OggS-0123456")); err == nil || c.audio != nil {
		t.Errorf("audio over the cap: %v (client called: %v), want a refusal and no call", err, c.audio != nil)
	}
}

type hungClient struct{}

func (hungClient) Transcribe(ctx context.Context, _, _ string, _ []byte) (string, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(time.Minute):
		return "", errors.New("the timeout did not reach the client")
	}
}

// TestModelTranscriberTimeout: Timeout bounds the client's call (retries included).
func TestModelTranscriberTimeout(t *testing.T) {
	tr := &ModelTranscriber{Client: hungClient{}, Model: "m", Timeout: 20 * time.Millisecond}
	_, err := tr.Transcribe(context.Background(), "v.ogg", "audio/ogg", strings.NewReader("OggS"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Transcribe = %v, want the deadline", err)
	}
}
