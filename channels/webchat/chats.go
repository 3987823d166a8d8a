package webchat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

var _ channels.Fetcher = (*Channel)(nil)

// ValidChat reports whether id may name a conversation: 1 to 40 lower-case letters, digits
// and "-", not starting with "-" (the first one's "owner", a new one's "c" and hex digits).
func ValidChat(id string) bool {
	if id == "" || len(id) > 40 || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// NewChat returns the id of a new conversation: "c" and 16 hex digits.
func NewChat() string {
	var b [8]byte
	rand.Read(b[:])
	return "c" + hex.EncodeToString(b[:])
}

// Errors Upload returns for a file the caller should refuse with a 4xx.
var (
	ErrNoUploads = errors.New("webchat: uploads are off")
	ErrTooLarge  = errors.New("webchat: the file is too large")
)

// uploadRef prefixes the Ref of an uploaded file; the rest is its name in UploadDir.
const uploadRef = "webchat-upload:"

// uploadTTL is how long an upload reef did not fetch is kept.
const uploadTTL = 24 * time.Hour

// KindOf is the media kind of a file by its MIME type.
func KindOf(mimeType string) messages.MediaKind {
	switch {
	case strings.HasPrefix(mimeType, "image/"):
		return messages.MediaImage
	case strings.HasPrefix(mimeType, "audio/"):
		return messages.MediaAudio
	case strings.HasPrefix(mimeType, "video/"):
		return messages.MediaVideo
	}
	return messages.MediaDocument
}

// MaxFile is the largest file of kind Upload takes.
func (c *Channel) MaxFile(kind messages.MediaKind) int64 {
	if c.cfg.MaxFile != nil {
		return c.cfg.MaxFile(kind)
	}
	return 20 << 20
}

// Upload keeps a file the owner sends with a message until reef fetches it, and returns its
// Media for Message.Media. A file over its kind's limit is refused (ErrTooLarge) and not kept.
func (c *Channel) Upload(name, mimeType string, r io.Reader) (messages.Media, error) {
	if c.cfg.UploadDir == "" {
		return messages.Media{}, ErrNoUploads
	}
	mimeType, _, _ = mime.ParseMediaType(mimeType)
	if mimeType == "" || mimeType == "application/octet-stream" {
		mimeType = mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
		mimeType, _, _ = mime.ParseMediaType(mimeType)
	}
	kind := KindOf(mimeType)
	limit := c.MaxFile(kind)
	if err := os.MkdirAll(c.cfg.UploadDir, 0o700); err != nil {
		return messages.Media{}, fmt.Errorf("webchat: upload: %w", err)
	}
	c.pruneUploads()
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	f, err := os.OpenFile(filepath.Join(c.cfg.UploadDir, id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return messages.Media{}, fmt.Errorf("webchat: upload: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		os.Remove(f.Name())
		return messages.Media{}, fmt.Errorf("webchat: upload: %w", err)
	case n > limit:
		os.Remove(f.Name())
		return messages.Media{}, fmt.Errorf("%w: %s is over %d MB, the limit for a %s", ErrTooLarge, baseName(name), limit>>20, kind)
	case n == 0:
		os.Remove(f.Name())
		return messages.Media{}, fmt.Errorf("%w: %s is empty", ErrEmpty, baseName(name))
	}
	return messages.Media{Kind: kind, Name: baseName(name), MIME: mimeType, Size: n, Ref: uploadRef + id}, nil
}

// Fetch opens an uploaded file for reef's media path (channels.Fetcher). The file stays
// until it is a day old, so a download retried after a restart finds it.
func (c *Channel) Fetch(_ context.Context, m messages.Media) (io.ReadCloser, error) {
	id, ok := strings.CutPrefix(m.Ref, uploadRef)
	if !ok || c.cfg.UploadDir == "" || len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("webchat: fetch: not an upload of this channel")
	}
	f, err := os.OpenInRoot(c.cfg.UploadDir, id)
	if err != nil {
		return nil, fmt.Errorf("webchat: fetch: %w", err)
	}
	return f, nil
}

// pruneUploads removes uploads older than uploadTTL.
func (c *Channel) pruneUploads() {
	ents, err := os.ReadDir(c.cfg.UploadDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > uploadTTL {
			os.Remove(filepath.Join(c.cfg.UploadDir, e.Name()))
		}
	}
}

// baseName is a file name without any directory, control character or quote, at most 100 bytes.
func baseName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '"' || r == '/' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	if len(name) > 100 {
		name = strings.ToValidUTF8(name[:100], "")
	}
	if name == "" || name == "." || name == ".." {
		name = "file"
	}
	return name
}
