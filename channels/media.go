package channels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/reefgw/reef/messages"
)

// Fetcher is implemented by channels that can download the files people send (the Ref of
// an inbound messages.Media). The caller closes the body and caps what it reads.
type Fetcher interface {
	Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error)
}

// FetchLimiter is implemented by channels whose platform lets the bot download files only
// up to a size (Telegram: 20 MB). A file announced bigger is not fetched; the agent is told.
type FetchLimiter interface {
	MaxFetch() int64
}

// ErrMedia marks a reply's file that cannot be sent (outside the workspace, missing, too big
// for the platform): sending it again will not help. Channels send a short note instead.
var ErrMedia = errors.New("file not sent")

// MediaFile is an outbound file opened for upload.
type MediaFile struct {
	Name string
	Size int64
	Body io.ReadCloser // an io.ReaderAt too (see Reader)
}

// OpenMedia opens a reply's file: Path inside Root with os.OpenInRoot (no path, symlink or
// ".." leaves the workspace), or Ref, an https URL, through client (the SSRF guard's; nil
// refuses URLs). A file over limit bytes is refused before any upload.
func OpenMedia(ctx context.Context, m messages.Media, client *http.Client, limit int64) (MediaFile, error) {
	if m.Ref != "" {
		return openURL(ctx, m, client, limit)
	}
	if m.Root == "" || m.Path == "" {
		return MediaFile{}, fmt.Errorf("%w: no file named", ErrMedia)
	}
	f, err := os.OpenInRoot(m.Root, m.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return MediaFile{}, fmt.Errorf("%w: %s does not exist in the workspace", ErrMedia, m.Path)
		}
		return MediaFile{}, fmt.Errorf("%w: %s is outside the workspace or unreadable", ErrMedia, m.Path)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return MediaFile{}, fmt.Errorf("%w: %s: %v", ErrMedia, m.Path, err)
	case !st.Mode().IsRegular():
		f.Close()
		return MediaFile{}, fmt.Errorf("%w: %s is not a regular file", ErrMedia, m.Path)
	case st.Size() > limit:
		f.Close()
		return MediaFile{}, fmt.Errorf("%w: %s is %d MB, over the platform's %d MB limit", ErrMedia, m.Path, st.Size()>>20, limit>>20)
	}
	name := m.Name
	if name == "" {
		name = path.Base(m.Path)
	}
	return MediaFile{Name: name, Size: st.Size(), Body: f}, nil
}

func openURL(ctx context.Context, m messages.Media, client *http.Client, limit int64) (MediaFile, error) {
	u, err := url.Parse(m.Ref)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" {
		return MediaFile{}, fmt.Errorf("%w: %q is not an http(s) URL", ErrMedia, m.Ref)
	}
	if client == nil {
		return MediaFile{}, fmt.Errorf("%w: this channel does not fetch URLs", ErrMedia)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.Ref, nil)
	if err != nil {
		return MediaFile{}, fmt.Errorf("%w: %v", ErrMedia, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return MediaFile{}, fmt.Errorf("%w: fetch %s: %v", ErrMedia, u.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return MediaFile{}, fmt.Errorf("%w: %s answered %d", ErrMedia, u.Host, resp.StatusCode)
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return MediaFile{}, fmt.Errorf("%w: the file at %s is %d MB, over the platform's %d MB limit", ErrMedia, u.Host, resp.ContentLength>>20, limit>>20)
	}
	name := m.Name
	if name == "" {
		name = path.Base(u.Path)
		if name == "/" || name == "." || name == "" {
			name = "file"
		}
	}
	defer resp.Body.Close()
	// Read whole, so that an upload retried (after a 429) can send it again (Rewind).
	data, err := io.ReadAll(&capped{resp.Body, limit})
	if err != nil {
		if errors.Is(err, ErrMedia) {
			return MediaFile{}, err
		}
		return MediaFile{}, fmt.Errorf("%w: fetch %s: %v", ErrMedia, u.Host, err)
	}
	return MediaFile{Name: name, Size: int64(len(data)), Body: memBody{bytes.NewReader(data)}}, nil
}

// memBody is a body held in memory.
type memBody struct{ *bytes.Reader }

func (memBody) Close() error { return nil }

// Reader returns a reader of the whole file, of its own: each attempt of an upload (a
// retry after a 429) takes a fresh one, since the reader of an earlier attempt is consumed
// (an upload of it sends nothing: Telegram answers "file must be non-empty") and may still
// be read by that attempt's goroutine.
func (f MediaFile) Reader() (io.Reader, error) {
	ra, ok := f.Body.(io.ReaderAt)
	if !ok || f.Size < 0 {
		return nil, fmt.Errorf("%w: the file cannot be read again", ErrMedia)
	}
	return io.NewSectionReader(ra, 0, f.Size), nil
}

// capped fails a read past n bytes, so an upload of a body that lied about its size stops.
type capped struct {
	io.ReadCloser
	n int64
}

func (c *capped) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, fmt.Errorf("%w: the file is over the platform's limit", ErrMedia)
	}
	return n, err
}

// MediaNote is the short line a chat gets for a file that could not be sent.
func MediaNote(m messages.Media, err error) string {
	name := m.Name
	if name == "" {
		name = path.Base(m.Path + m.Ref)
	}
	return "(" + name + " not sent: " + strings.TrimPrefix(err.Error(), ErrMedia.Error()+": ") + ")"
}

// IsPhoto reports whether m is best sent as a photo (shown inline) rather than a file.
func IsPhoto(m messages.Media, size int64) bool {
	ext := strings.ToLower(path.Ext(m.Name + m.Path))
	if m.Ref != "" {
		ext = strings.ToLower(path.Ext(m.Ref))
	}
	return (m.Kind == messages.MediaImage || ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".webp") &&
		ext != ".gif" && ext != ".svg" && size <= 10<<20
}
