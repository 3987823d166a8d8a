package feishu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	larkcore "github.com/larksuite/oapi-sdk-go/v3/core"
	larkim "github.com/larksuite/oapi-sdk-go/v3/service/im/v1"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// Upload limits of the platform: images 10 MB, files 30 MB.
const (
	MaxImageUpload = 10 << 20
	MaxFileUpload  = 30 << 20
)

var _ channels.Fetcher = (*Bot)(nil)

// mediaContent is the content of image, file, audio and media (video) messages.
type mediaContent struct {
	ImageKey string `json:"image_key"`
	FileKey  string `json:"file_key"`
	FileName string `json:"file_name"`
}

// inboundMedia lists the file of an image, file, audio or media message, and the images and
// videos of a post (rich text). Ref is "<message id>/<key>/<type>", what GET
// .../messages/{id}/resources/{key}?type= needs.
func inboundMedia(messageID, msgType, content string) []messages.Media {
	if msgType == "post" {
		return postMedia(messageID, content)
	}
	var c mediaContent
	if json.Unmarshal([]byte(content), &c) != nil {
		return nil
	}
	ref := func(key, typ string) string { return messageID + "/" + key + "/" + typ }
	switch {
	case msgType == "image" && c.ImageKey != "":
		return []messages.Media{{Kind: messages.MediaImage, Ref: ref(c.ImageKey, "image")}}
	case msgType == "file" && c.FileKey != "":
		return []messages.Media{{Kind: kindOfName(c.FileName), Name: c.FileName, Ref: ref(c.FileKey, "file")}}
	case msgType == "audio" && c.FileKey != "":
		// Opus in an Ogg container: named .ogg, which transcription services take (OpenAI
		// refuses .opus).
		return []messages.Media{{Kind: messages.MediaVoice, MIME: "audio/ogg", Name: "voice.ogg", Ref: ref(c.FileKey, "file")}}
	case msgType == "media" && c.FileKey != "":
		return []messages.Media{{Kind: messages.MediaVideo, MIME: "video/mp4", Name: c.FileName, Ref: ref(c.FileKey, "file")}}
	}
	return nil
}

// postMedia lists a post's img elements as images and its media elements as videos, in the
// order they appear; a key met twice is downloaded once.
func postMedia(messageID, content string) []messages.Media {
	p, ok := parsePost(content)
	if !ok {
		return nil
	}
	var out []messages.Media
	seen := map[string]bool{}
	for _, para := range p.Content {
		for _, e := range para {
			var m messages.Media
			switch {
			case e.Tag == "img" && e.ImageKey != "":
				m = messages.Media{Kind: messages.MediaImage, Ref: messageID + "/" + e.ImageKey + "/image"}
			case e.Tag == "media" && e.FileKey != "":
				m = messages.Media{Kind: messages.MediaVideo, MIME: "video/mp4", Ref: messageID + "/" + e.FileKey + "/file"}
			default:
				continue
			}
			if !seen[m.Ref] {
				seen[m.Ref] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// kindOfName classifies a file message by its name: people send pictures as files too.
func kindOfName(name string) messages.MediaKind {
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg", ".png", ".gif", ".webp":
		return messages.MediaImage
	case ".mp3", ".m4a", ".wav", ".ogg", ".opus":
		return messages.MediaAudio
	case ".mp4", ".mov", ".webm":
		return messages.MediaVideo
	}
	return messages.MediaDocument
}

// Fetch downloads a message's file from the configured API (GET
// /open-apis/im/v1/messages/{id}/resources/{key}?type=image|file, tenant token).
func (b *Bot) Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error) {
	parts := strings.Split(m.Ref, "/")
	if len(parts) != 3 {
		return nil, fmt.Errorf("feishu: download: %q is not a message resource", m.Ref)
	}
	resp, err := b.im.MessageResource.Get(ctx, larkim.NewGetMessageResourceReqBuilder().
		MessageId(parts[0]).FileKey(parts[1]).Type(parts[2]).Build())
	if err != nil {
		return nil, b.wrap("download", err)
	}
	if !resp.Success() || resp.File == nil {
		return nil, b.wrap("download", &codeErr{code: resp.Code, msg: resp.Msg, status: resp.StatusCode})
	}
	return io.NopCloser(resp.File), nil
}

// sendFiles uploads a reply's files, then sends each as an image or file message: images by
// POST /open-apis/im/v1/images, other files by POST /open-apis/im/v1/files. A file that
// cannot be sent gets a short note in the chat instead.
func (b *Bot) sendFiles(ctx context.Context, out messages.Outbound) ([]string, error) {
	var ids []string
	for i, m := range out.Media {
		msgType, content, err := b.upload(ctx, m)
		if errors.Is(err, channels.ErrMedia) {
			b.log.Warn().Err(err).Str("chat", out.ChatID).Msg("feishu: a reply's file was not sent")
			msgType, content = "post", postContent(channels.MediaNote(m, err))
		} else if err != nil {
			return ids, b.wrap("upload", err)
		}
		key := ""
		if out.OutboxSeq != 0 {
			key = fileKey(out.SessionKey, out.OutboxSeq, i)
		}
		id, err := b.createTyped(ctx, out.ChatID, msgType, content, key)
		if err != nil {
			return ids, b.wrap("send", err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// upload sends one file to the platform and returns the message type and content to post.
func (b *Bot) upload(ctx context.Context, m messages.Media) (msgType, content string, err error) {
	f, err := channels.OpenMedia(ctx, m, b.mediaClient, MaxFileUpload)
	if err != nil {
		return "", "", err
	}
	defer f.Body.Close()
	// Read whole: the SDK's form reads its reader once, and a retry after a 429 must send
	// the file again (the cap held above).
	data, err := io.ReadAll(f.Body)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", channels.ErrMedia, err)
	}
	if channels.IsPhoto(m, f.Size) && f.Size >= 0 && f.Size <= MaxImageUpload && imageFits(data) {
		var key string
		_, err = b.call(ctx, func() (*larkcore.ApiResp, larkcore.CodeError, string, error) {
			resp, err := b.im.Image.Create(ctx, larkim.NewCreateImageReqBuilder().Body(
				larkim.NewCreateImageReqBodyBuilder().ImageType("message").Image(bytes.NewReader(data)).Build()).Build())
			if err != nil {
				return nil, larkcore.CodeError{}, "", err
			}
			if resp.Data != nil {
				key = str(resp.Data.ImageKey)
			}
			return resp.ApiResp, resp.CodeError, "", nil
		})
		raw, _ := json.Marshal(map[string]string{"image_key": key})
		return "image", string(raw), err
	}
	var key string
	_, err = b.call(ctx, func() (*larkcore.ApiResp, larkcore.CodeError, string, error) {
		resp, err := b.im.File.Create(ctx, larkim.NewCreateFileReqBuilder().Body(larkim.NewCreateFileReqBodyBuilder().
			FileType(fileType(f.Name)).FileName(f.Name).File(bytes.NewReader(data)).Build()).Build())
		if err != nil {
			return nil, larkcore.CodeError{}, "", err
		}
		if resp.Data != nil {
			key = str(resp.Data.FileKey)
		}
		return resp.ApiResp, resp.CodeError, "", nil
	})
	raw, _ := json.Marshal(map[string]string{"file_key": key})
	return "file", string(raw), err
}

// fileType is the platform's file_type of an upload: opus, mp4, pdf, doc, xls, ppt or stream.
func fileType(name string) string {
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".opus", ".ogg":
		return "opus"
	case ".mp4", ".pdf", ".doc", ".xls", ".ppt":
		return ext[1:]
	case ".docx":
		return "doc"
	case ".xlsx":
		return "xls"
	case ".pptx":
		return "ppt"
	}
	return "stream"
}

// Resolution limits of image uploads: a GIF at most 2000×2000 pixels, other images
// 12000×12000. A bigger image is sent as a file, which has no such limit.
const (
	maxGIFSide   = 2000
	maxImageSide = 12000
)

// imageFits reports whether an image is within the image upload's resolution limits; one
// whose size cannot be read is tried as an image.
func imageFits(data []byte) bool {
	format, w, h, ok := channels.ImageSize(bytes.NewReader(data))
	if !ok {
		return true
	}
	side := maxImageSide
	if format == "gif" {
		side = maxGIFSide
	}
	return w <= side && h <= side
}
