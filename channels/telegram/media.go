package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/mymmrac/telego"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Upload limits of the Bot API: photos 10 MB, other files 50 MB.
const (
	maxPhotoUpload = 10 << 20
	maxFileUpload  = 50 << 20
)

// maxDownload is the largest file a bot can download (getFile): 20 MB.
const maxDownload = 20 << 20

var _ channels.Fetcher = (*Bot)(nil)
var _ channels.FetchLimiter = (*Bot)(nil)

// MaxFetch is the largest file a Telegram bot can download: 20 MB.
func (b *Bot) MaxFetch() int64 { return maxDownload }

// errTooBig is a file Telegram will not let a bot download.
var errTooBig = fmt.Errorf("telegram: the file is over the 20 MB Telegram lets bots download: %w", channels.ErrPermanent)

// inboundMedia lists the files of m reef downloads: the largest size of a photo, a
// document, a voice note, an audio file, a video, a round video note or an animation (a GIF,
// which Telegram converts to a silent MP4). Ref is the file_id.
func inboundMedia(m *telego.Message) []messages.Media {
	switch {
	case m.Animation != nil:
		// Checked before Document: Telegram sets both on an animation, for old clients.
		a := m.Animation
		return []messages.Media{{Kind: messages.MediaVideo, Name: a.FileName, MIME: orDefault(a.MimeType, "video/mp4"), Size: a.FileSize, Ref: a.FileID}}
	case len(m.Photo) > 0:
		p := m.Photo[len(m.Photo)-1] // sizes come smallest first
		return []messages.Media{{Kind: messages.MediaImage, MIME: "image/jpeg", Size: int64(p.FileSize), Ref: p.FileID}}
	case m.Document != nil:
		d := m.Document
		kind := messages.MediaDocument
		if strings.HasPrefix(d.MimeType, "image/") && d.MimeType != "image/svg+xml" {
			kind = messages.MediaImage // an image sent "as a file", uncompressed
		}
		return []messages.Media{{Kind: kind, Name: d.FileName, MIME: d.MimeType, Size: d.FileSize, Ref: d.FileID}}
	case m.Voice != nil:
		return []messages.Media{{Kind: messages.MediaVoice, MIME: orDefault(m.Voice.MimeType, "audio/ogg"), Size: m.Voice.FileSize, Ref: m.Voice.FileID}}
	case m.Audio != nil:
		a := m.Audio
		return []messages.Media{{Kind: messages.MediaAudio, Name: a.FileName, MIME: a.MimeType, Size: a.FileSize, Ref: a.FileID}}
	case m.Video != nil:
		v := m.Video
		return []messages.Media{{Kind: messages.MediaVideo, Name: v.FileName, MIME: orDefault(v.MimeType, "video/mp4"), Size: v.FileSize, Ref: v.FileID}}
	case m.VideoNote != nil:
		return []messages.Media{{Kind: messages.MediaVideo, MIME: "video/mp4", Size: int64(m.VideoNote.FileSize), Ref: m.VideoNote.FileID}}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Fetch downloads a file people sent: getFile for its path, then GET
// <apiRoot>/file/bot<token>/<path>. The token is in that URL: no error or log line shows it.
// A file over 20 MB, which Telegram does not let bots download, is refused at once (an
// error wrapping channels.ErrPermanent).
func (b *Bot) Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error) {
	if m.Size > maxDownload {
		return nil, errTooBig
	}
	var f *telego.File
	err := b.call(ctx, "getFile", func(ctx context.Context) (err error) {
		f, err = b.api.GetFile(ctx, &telego.GetFileParams{FileID: m.Ref})
		return err
	})
	if hasDescription(err, http.StatusBadRequest, "file is too big") {
		return nil, errTooBig
	}
	if err != nil {
		return nil, err
	}
	if f.FilePath == "" {
		return nil, errors.New("telegram: getFile gave no file path (files over 20 MB cannot be downloaded by bots)")
	}
	u := strings.TrimRight(b.cfg.APIRoot, "/") + "/file/bot" + b.cfg.Token + "/" + (&url.URL{Path: f.FilePath}).EscapedPath()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("telegram: download: %s", redact(err.Error(), b.cfg.Token))
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("telegram: download: %w", redactError(err, b.cfg.Token))
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("telegram: download: the file server answered %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// namedReader gives telego a file name with the body it uploads.
type namedReader struct {
	io.Reader
	name string
}

func (n namedReader) Name() string { return n.name }

// sendMedia uploads one file of a reply: sendPhoto for an image Telegram shows inline
// (within sendPhoto's dimensions; else, or when Telegram refuses it, sendDocument),
// sendVoice for an .ogg voice note, sendVideo for a video (.mp4, .mov, .webm or a video/*
// type) so it plays in the chat, sendDocument otherwise. A file that cannot be sent
// (outside the workspace, missing, over the limit) is an error wrapping channels.ErrMedia.
func (b *Bot) sendMedia(ctx context.Context, chat int64, thread, reply int, m messages.Media) (string, error) {
	f, err := channels.OpenMedia(ctx, m, b.cfg.MediaClient, maxFileUpload)
	if err != nil {
		return "", err
	}
	defer f.Body.Close()
	var file telego.InputFile // the attempt's: each attempt reads the whole file anew
	call := func(method string, fn func(context.Context) error) error {
		return b.call(ctx, method, func(ctx context.Context) error {
			r, err := f.Reader()
			if err != nil {
				return err
			}
			file = telego.InputFile{File: namedReader{r, f.Name}}
			return fn(ctx)
		})
	}
	var rp *telego.ReplyParameters
	if reply != 0 {
		rp = &telego.ReplyParameters{MessageID: reply, AllowSendingWithoutReply: true}
	}
	id := telego.ChatID{ID: chat}
	var msg *telego.Message
	ext := strings.ToLower(path.Ext(f.Name))
	document := func() error {
		return call("sendDocument", func(ctx context.Context) (err error) {
			msg, err = b.api.SendDocument(ctx, &telego.SendDocumentParams{ChatID: id, MessageThreadID: thread, Document: file, ReplyParameters: rp})
			return err
		})
	}
	switch {
	case channels.IsPhoto(m, f.Size) && f.Size >= 0 && f.Size <= maxPhotoUpload && photoFits(f):
		err = call("sendPhoto", func(ctx context.Context) (err error) {
			msg, err = b.api.SendPhoto(ctx, &telego.SendPhotoParams{ChatID: id, MessageThreadID: thread, Photo: file, ReplyParameters: rp})
			return err
		})
		if isPhotoRefusal(err) { // an image Telegram will not show as a photo still goes, as a file
			b.log.Info().Str("file", f.Name).Err(err).Msg("telegram: photo refused; sending it as a document")
			err = document()
		}
	case m.Kind == messages.MediaVoice || ext == ".ogg" || ext == ".oga" || ext == ".opus":
		err = call("sendVoice", func(ctx context.Context) (err error) {
			msg, err = b.api.SendVoice(ctx, &telego.SendVoiceParams{ChatID: id, MessageThreadID: thread, Voice: file, ReplyParameters: rp})
			return err
		})
	case isVideo(m, ext):
		err = call("sendVideo", func(ctx context.Context) (err error) {
			msg, err = b.api.SendVideo(ctx, &telego.SendVideoParams{ChatID: id, MessageThreadID: thread, Video: file, ReplyParameters: rp})
			return err
		})
	default:
		err = document()
	}
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(chat, 10) + ":" + strconv.Itoa(msg.MessageID), nil
}

// isVideo reports whether a reply's file goes out as a video: by its kind or MIME type, else
// by its name's extension (what a MEDIA: line gives).
func isVideo(m messages.Media, ext string) bool {
	switch ext {
	case ".mp4", ".mov", ".webm", ".m4v":
		return true
	}
	return m.Kind == messages.MediaVideo || strings.HasPrefix(strings.ToLower(m.MIME), "video/")
}

// photoFits reports whether an image meets sendPhoto's rules on its dimensions: width and
// height together at most 10,000 pixels, the long side at most 20 times the short one (a
// full-page screenshot does not). An image whose size cannot be read is tried as a photo.
func photoFits(f channels.MediaFile) bool {
	r, err := f.Reader()
	if err != nil {
		return true
	}
	_, w, h, ok := channels.ImageSize(r)
	if !ok || w <= 0 || h <= 0 {
		return true
	}
	return w+h <= 10000 && max(w, h) <= 20*min(w, h)
}

// isPhotoRefusal reports whether Telegram refused a photo for what it is (its dimensions,
// or an image it cannot process): sent as a document, it goes.
func isPhotoRefusal(err error) bool {
	return hasDescription(err, http.StatusBadRequest, "photo_invalid_dimensions") ||
		hasDescription(err, http.StatusBadRequest, "image_process_failed")
}
