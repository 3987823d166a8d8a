package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/messages"
)

// Limits caps what reef downloads, per kind of file, in bytes; 0 takes the default.
type Limits struct {
	Image, Audio, Video, Document int64
	InlineChars                   int // of a text document, inlined into the message; default 20,000
}

// Defaults of Limits.
const (
	DefaultImageBytes    = 10 << 20
	DefaultAudioBytes    = 25 << 20
	DefaultVideoBytes    = 50 << 20
	DefaultDocumentBytes = 20 << 20
	DefaultInlineChars   = 20_000
)

// For returns the cap of a kind of file.
func (l Limits) For(k messages.MediaKind) int64 {
	pick := func(v, def int64) int64 {
		if v > 0 {
			return v
		}
		return def
	}
	switch k {
	case messages.MediaImage:
		return pick(l.Image, DefaultImageBytes)
	case messages.MediaAudio, messages.MediaVoice:
		return pick(l.Audio, DefaultAudioBytes)
	case messages.MediaVideo:
		return pick(l.Video, DefaultVideoBytes)
	}
	return pick(l.Document, DefaultDocumentBytes)
}

func (l Limits) inline() int {
	if l.InlineChars > 0 {
		return l.InlineChars
	}
	return DefaultInlineChars
}

// Open downloads one file a channel announced; the caller closes the body.
type Open func(ctx context.Context, m messages.Media) (io.ReadCloser, error)

// ErrTooLarge is a file over its kind's cap.
var ErrTooLarge = errors.New("over the size limit")

// ErrUnavailable is a file the platform refuses to give for good (Open wraps it): it is not
// tried again.
var ErrUnavailable = errors.New("the platform will not give this file")

// Fetcher saves the files of inbound messages into an agent's workspace.
type Fetcher struct {
	Workspace   string // absolute
	Limits      Limits
	Transcriber Transcriber // nil: voice and audio are saved, not transcribed
	Log         zerolog.Logger
	// Attempts per file (default 3) and the wait before the second (doubled after).
	Attempts int
	Backoff  time.Duration
	// PlatformMax is the largest file the platform lets the bot download (Telegram: 20 MB;
	// 0: no limit), Platform its name for the note on a bigger file.
	PlatformMax int64
	Platform    string
}

// Fetch downloads the pending files of one message (received at day) and returns them with
// Path, Note and Text set. open nil means the channel cannot download: each file gets a note.
// A file is saved under inbox/<date>/ with a name made of a hash of its platform handle and
// its own name, so a download retried after a restart replaces the same file.
func (f *Fetcher) Fetch(ctx context.Context, day time.Time, ms []messages.Media, open Open) []messages.Media {
	out := append([]messages.Media(nil), ms...)
	dir := path.Join("inbox", day.Format("2006-01-02"))
	for i := range out {
		m := &out[i]
		if !m.Pending() {
			continue
		}
		if m.MIME == "" {
			m.MIME = MIMEOf(*m)
		}
		limit := f.Limits.For(m.Kind)
		switch {
		case open == nil:
			m.Note = "not downloaded: reef cannot fetch files from this channel"
			continue
		case m.Size > limit && (f.PlatformMax <= 0 || limit <= f.PlatformMax):
			m.Note = fmt.Sprintf("not downloaded: %s is over the %s limit for %s files", Bytes(m.Size), Bytes(limit), m.Kind)
			continue
		case f.PlatformMax > 0 && m.Size > f.PlatformMax:
			m.Note = fmt.Sprintf("not downloaded: %s lets bots download files up to %s, and this one is %s; tell the sender, who can send it smaller (compressed or split) or as a link",
				f.Platform, Bytes(f.PlatformMax), Bytes(m.Size))
			continue
		}
		tmp := path.Join(dir, fileName(*m)) + ".part"
		n, sniffed, err := f.download(ctx, tmp, *m, limit, open)
		switch {
		case errors.Is(err, ErrTooLarge):
			m.Note = fmt.Sprintf("not downloaded: it is over the %s limit for %s files", Bytes(limit), m.Kind)
			continue
		case err != nil:
			f.Log.Warn().Err(err).Str("file", m.Name).Str("kind", string(m.Kind)).Msg("media: download failed")
			m.Note = "not downloaded: " + err.Error()
			continue
		}
		if m.MIME == "" || m.MIME == "application/octet-stream" {
			m.MIME = sniffed // a platform that gives no type (Feishu images): named by the content
		}
		rel := path.Join(dir, fileName(*m))
		if err := f.place(tmp, rel); err != nil {
			m.Note = "not saved: " + err.Error()
			continue
		}
		m.Path, m.Size = rel, n
		f.read(ctx, m)
	}
	return out
}

// download saves one file to tmp, trying again after transport failures, and returns its
// size and the MIME type its first bytes show.
func (f *Fetcher) download(ctx context.Context, tmp string, m messages.Media, limit int64, open Open) (int64, string, error) {
	attempts, wait := f.Attempts, f.Backoff
	if attempts <= 0 {
		attempts = 3
	}
	if wait <= 0 {
		wait = time.Second
	}
	var err error
	for a := 0; a < attempts; a++ {
		if a > 0 {
			select {
			case <-ctx.Done():
				return 0, "", ctx.Err()
			case <-time.After(wait):
			}
			wait *= 2
		}
		var n int64
		var sniffed string
		if n, sniffed, err = f.save(ctx, tmp, m, limit, open); err == nil || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return n, sniffed, err
		}
	}
	return 0, "", err
}

// save writes one download to tmp through os.Root (nothing outside the workspace can be
// written, whatever the name) and sniffs its type from the first bytes.
func (f *Fetcher) save(ctx context.Context, tmp string, m messages.Media, limit int64, open Open) (int64, string, error) {
	body, err := open(ctx, m)
	if err != nil {
		return 0, "", err
	}
	defer body.Close()
	root, err := os.OpenRoot(f.Workspace)
	if err != nil {
		return 0, "", fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	if err := root.MkdirAll(path.Dir(tmp), 0o755); err != nil {
		return 0, "", fmt.Errorf("create %s: %w", path.Dir(tmp), err)
	}
	w, err := root.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, "", fmt.Errorf("create %s: %w", tmp, err)
	}
	head := &headWriter{}
	n, err := io.Copy(io.MultiWriter(w, head), io.LimitReader(body, limit+1))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = ErrTooLarge
	}
	if err != nil {
		_ = root.Remove(tmp)
		return 0, "", err
	}
	sniffed := http.DetectContentType(head.b)
	sniffed, _, _ = strings.Cut(sniffed, ";")
	return n, sniffed, nil
}

// place renames a finished download to its name.
func (f *Fetcher) place(tmp, rel string) error {
	root, err := os.OpenRoot(f.Workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Rename(tmp, rel); err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("save %s: %w", rel, err)
	}
	return nil
}

// headWriter keeps the first 512 bytes written to it, for http.DetectContentType.
type headWriter struct{ b []byte }

func (h *headWriter) Write(p []byte) (int, error) {
	if n := 512 - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// Bytes is a size as people read it: 512 B, 3.4 KB, 30.0 MB (binary units, as the caps in
// media.maxMB are counted).
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
