package media

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
)

// Sources of the untrusted blocks Describe writes.
const (
	SourceTranscript = "voice_transcript"
	SourceDocument   = "attached_document"
)

// textExts are documents read as text and inlined, besides text/* MIME types.
var textExts = map[string]bool{
	".txt": true, ".md": true, ".markdown": true, ".csv": true, ".tsv": true, ".json": true, ".yaml": true,
	".yml": true, ".toml": true, ".xml": true, ".html": true, ".htm": true, ".log": true, ".ini": true,
	".go": true, ".py": true, ".js": true, ".ts": true, ".java": true, ".c": true, ".h": true, ".cpp": true,
	".rs": true, ".rb": true, ".sh": true, ".sql": true, ".css": true, ".kt": true, ".swift": true, ".php": true,
}

// textLike reports whether a document is worth reading as text.
func textLike(m messages.Media) bool {
	mime := MIMEOf(m)
	return strings.HasPrefix(mime, "text/") || mime == "application/json" || mime == "application/xml" ||
		textExts[strings.ToLower(path.Ext(m.Name))]
}

// read fills m.Text from the saved file: a transcript of voice and audio, the text of a
// text-like document (valid UTF-8 only, capped).
func (f *Fetcher) read(ctx context.Context, m *messages.Media) {
	switch {
	case (m.Kind == messages.MediaVoice || m.Kind == messages.MediaAudio) && f.Transcriber != nil:
		file, err := os.OpenInRoot(f.Workspace, m.Path)
		if err != nil {
			m.Note = "not transcribed: " + err.Error()
			return
		}
		defer file.Close()
		text, err := f.Transcriber.Transcribe(ctx, path.Base(m.Path), MIMEOf(*m), file)
		if err != nil {
			f.Log.Warn().Err(err).Str("file", m.Path).Msg("media: transcription failed")
			m.Note = "not transcribed: the transcription service failed"
			return
		}
		m.Text = strings.TrimSpace(text)
	case m.Kind == messages.MediaDocument && textLike(*m):
		file, err := os.OpenInRoot(f.Workspace, m.Path)
		if err != nil {
			return
		}
		defer file.Close()
		limit := f.Limits.inline()
		data, _ := io.ReadAll(io.LimitReader(file, int64(limit)*4+4))
		if !utf8.Valid(data) && !utf8.Valid(data[:max(0, len(data)-3)]) {
			return // not text after all
		}
		text := strings.ToValidUTF8(string(data), "")
		if r := []rune(text); len(r) > limit {
			text = string(r[:limit]) + fmt.Sprintf("\n[… cut at %d characters; the whole file is %s]", limit, m.Path)
		}
		m.Text = text
	}
}

// Describe is what the model is told about the files of a message, appended to its text:
// one line per file (where it is saved, or why not), then transcripts and inlined documents
// wrapped as untrusted data. "" when there are none.
func Describe(ms []messages.Media) string {
	var b strings.Builder
	for _, m := range ms {
		name := m.Name
		if name == "" {
			name = string(m.Kind)
		}
		b.WriteString("\n[")
		b.WriteString(label(m.Kind))
		// A video reaches no model as such: its type tells the agent what a tool could do with it.
		typ := ""
		if t := MIMEOf(m); m.Kind == messages.MediaVideo && t != "" {
			typ = ", " + t
		}
		switch {
		case m.Path != "":
			fmt.Fprintf(&b, ": %s (%s%s)", m.Path, Bytes(m.Size), typ)
		case m.Size > 0:
			fmt.Fprintf(&b, ": %s (%s%s)", name, Bytes(m.Size), typ)
		case typ != "":
			fmt.Fprintf(&b, ": %s (%s)", name, typ[2:])
		default:
			fmt.Fprintf(&b, ": %s", name)
		}
		if m.Note != "" {
			b.WriteString(", " + m.Note)
		}
		switch {
		case m.Text != "" && (m.Kind == messages.MediaVoice || m.Kind == messages.MediaAudio):
			b.WriteString(", transcript:]\n")
			b.WriteString(agent.WrapUntrusted(SourceTranscript, m.Text))
		case m.Text != "":
			b.WriteString(", content:]\n")
			b.WriteString(agent.WrapUntrusted(SourceDocument, m.Text))
		case m.Path != "" && MIMEOf(m) == "application/pdf":
			b.WriteString(", a PDF: reef does not extract its text; read it with a tool if you have one]")
		default:
			b.WriteString("]")
		}
	}
	return strings.TrimPrefix(b.String(), "\n")
}

func label(k messages.MediaKind) string {
	switch k {
	case messages.MediaImage:
		return "image"
	case messages.MediaVoice:
		return "voice message"
	case messages.MediaAudio:
		return "audio"
	case messages.MediaVideo:
		return "video"
	}
	return "file"
}

// Image input limits: how many of the latest images a request carries, and the largest
// file read for one. Each provider client then fits the image to its provider's own limits
// (scaled down, or converted: providers/internal/imagefit), so a 9 MB photo still reaches
// the model.
const (
	MaxImages     = 4
	MaxImageBytes = 10 << 20
)

// visionMIME are the image types the providers accept as input.
var visionMIME = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// LoadImages returns msgs with the bytes of the latest MaxImages images of user messages
// filled in (Media.Data), read from the workspace; the entries it changes are copies. An
// image that cannot be read or is too big stays a path in the text.
func LoadImages(workspace string, msgs []messages.ChatMessage) []messages.ChatMessage {
	left := MaxImages
	var out []messages.ChatMessage
	for i := len(msgs) - 1; i >= 0 && left > 0; i-- {
		m := msgs[i]
		if m.Role != messages.RoleUser || len(m.Media) == 0 {
			continue
		}
		media := append([]messages.Media(nil), m.Media...)
		changed := false
		for j := range media {
			md := &media[j]
			if md.Kind != messages.MediaImage || md.Path == "" || !visionMIME[MIMEOf(*md)] || left == 0 {
				continue
			}
			data, err := readCapped(workspace, md.Path, MaxImageBytes)
			if err != nil {
				continue
			}
			md.Data, md.MIME = data, MIMEOf(*md)
			left--
			changed = true
		}
		if changed {
			if out == nil {
				out = append([]messages.ChatMessage(nil), msgs...)
			}
			m.Media = media
			out[i] = m
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

func readCapped(workspace, rel string, limit int64) ([]byte, error) {
	f, err := os.OpenInRoot(workspace, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, ErrTooLarge
	}
	return data, nil
}
