package media

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
)

// maxNameBytes bounds a saved file's name (most file systems allow 255 bytes).
const maxNameBytes = 120

// SafeName turns a name a sender chose into one safe to create in a directory: no path
// separators, no leading dots, no control or shell-hostile characters, at most maxNameBytes
// bytes with the extension kept. An empty result becomes fallback.
func SafeName(name, fallback string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), strings.ContainsRune(`/\:*?"<>|$`+"`", r):
			b.WriteByte('_')
		case unicode.IsSpace(r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimLeft(b.String(), ".-_")
	if out == "" || out == "." || out == ".." {
		out = fallback
	}
	if len(out) > maxNameBytes {
		ext := path.Ext(out)
		if len(ext) > 16 {
			ext = ""
		}
		stem := out[:maxNameBytes-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		out = stem + ext
	}
	return out
}

// extByMIME gives a file without a name an extension.
var extByMIME = map[string]string{
	"image/jpeg": ".jpg", "image/png": ".png", "image/gif": ".gif", "image/webp": ".webp",
	"audio/ogg": ".ogg", "audio/mpeg": ".mp3", "audio/mp4": ".m4a", "audio/wav": ".wav",
	"video/mp4": ".mp4", "application/pdf": ".pdf", "text/plain": ".txt",
}

// mimeByExt is the reverse, for files whose MIME type a platform did not give.
var mimeByExt = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp",
	".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/ogg", ".mp3": "audio/mpeg", ".m4a": "audio/mp4",
	".wav": "audio/wav", ".mp4": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm",
	".pdf": "application/pdf", ".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv",
	".json": "application/json",
}

// MIMEOf returns m's MIME type, from the platform or else from its name's (or saved path's)
// extension.
func MIMEOf(m messages.Media) string {
	if m.MIME != "" {
		return strings.ToLower(strings.TrimSpace(strings.SplitN(m.MIME, ";", 2)[0]))
	}
	if mime, ok := mimeByExt[strings.ToLower(path.Ext(m.Name))]; ok {
		return mime
	}
	return mimeByExt[strings.ToLower(path.Ext(m.Path))]
}

// KindOf classifies a file by its MIME type and name, for files a platform did not classify.
func KindOf(mime, name string) messages.MediaKind {
	if mime == "" {
		mime = mimeByExt[strings.ToLower(path.Ext(name))]
	}
	switch {
	case strings.HasPrefix(mime, "image/"):
		return messages.MediaImage
	case strings.HasPrefix(mime, "audio/"):
		return messages.MediaAudio
	case strings.HasPrefix(mime, "video/"):
		return messages.MediaVideo
	}
	return messages.MediaDocument
}

// fileName is the name m is saved under in its day's inbox folder: a short hash of its
// platform handle (so two senders' "image.jpg" do not collide, and a download retried after
// a restart lands on the same file) and its own name, or one made from its kind.
func fileName(m messages.Media) string {
	name := m.Name
	if name == "" {
		name = string(m.Kind) + extByMIME[MIMEOf(m)]
	}
	sum := sha256.Sum256([]byte(m.Via + "\x00" + m.Ref))
	return SafeName(hex.EncodeToString(sum[:4])+"-"+SafeName(name, "file"), "file")
}
