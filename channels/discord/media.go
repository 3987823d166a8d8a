package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// MaxUpload is the largest file the bot attaches: Discord's limit for servers without boosts.
const MaxUpload = 10 << 20

// maxFilesPerMessage is Discord's limit of attachments per message.
const maxFilesPerMessage = 10

var _ channels.Fetcher = (*Bot)(nil)

// inboundMedia lists a message's attachments; Ref is the attachment's CDN url.
func inboundMedia(m *discordgo.Message) []messages.Media {
	var out []messages.Media
	for _, a := range m.Attachments {
		if a == nil || a.URL == "" {
			continue
		}
		kind := messages.MediaDocument
		switch ct := a.ContentType; {
		case strings.HasPrefix(ct, "image/") && ct != "image/svg+xml":
			kind = messages.MediaImage
		case strings.HasPrefix(ct, "audio/"):
			kind = messages.MediaAudio
			if strings.HasPrefix(a.Filename, "voice-message") {
				kind = messages.MediaVoice
			}
		case strings.HasPrefix(ct, "video/"):
			kind = messages.MediaVideo
		}
		out = append(out, messages.Media{Kind: kind, Name: a.Filename, MIME: a.ContentType, Size: int64(a.Size), Ref: a.URL})
	}
	return out
}

// Fetch downloads an attachment from the url Discord gave. That url is not the configured
// API: it goes through the media client (the SSRF guard's), never the bot's own client,
// which carries the token.
func (b *Bot) Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error) {
	if b.mediaClient == nil {
		return nil, errors.New("discord: no media client configured")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.Ref, nil)
	if err != nil {
		return nil, fmt.Errorf("discord: download: %w", err)
	}
	resp, err := b.mediaClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discord: download: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("discord: download: the CDN answered %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// sendFiles attaches a reply's files, up to ten per message (multipart: payload_json and
// files[n]). A file that cannot be sent is named in a note in the content instead.
func (b *Bot) sendFiles(ctx context.Context, target string, out messages.Outbound, reply bool) ([]string, error) {
	var ids []string
	for start := 0; start < len(out.Media); start += maxFilesPerMessage {
		batch := out.Media[start:min(len(out.Media), start+maxFilesPerMessage)]
		var files []*discordgo.File
		var notes []string
		for _, m := range batch {
			f, err := channels.OpenMedia(ctx, m, b.mediaClient, MaxUpload)
			if err != nil {
				b.log.Warn().Err(err).Str("channel", target).Msg("discord: a reply's file was not sent")
				notes = append(notes, channels.MediaNote(m, err))
				continue
			}
			defer f.Body.Close()
			files = append(files, &discordgo.File{Name: f.Name, Reader: f.Body})
		}
		msg := &messageSend{MessageSend: discordgo.MessageSend{Content: strings.Join(notes, "\n"), AllowedMentions: allowedMentions()}}
		if reply && start == 0 && out.ReplyToID != "" {
			no := false
			msg.Reference = &discordgo.MessageReference{MessageID: out.ReplyToID, ChannelID: target, FailIfNotExists: &no}
		}
		if out.OutboxSeq != 0 {
			msg.Nonce, msg.EnforceNonce = nonce(out.SessionKey, out.OutboxSeq, 1000+start), true
		}
		contentType, body, err := discordgo.MultipartBodyWithJSON(msg, files)
		if err != nil {
			return ids, fmt.Errorf("discord: send files: %w", err)
		}
		m, err := call(ctx, b, func(opts ...discordgo.RequestOption) (*discordgo.Message, error) {
			endpoint := discordgo.EndpointChannelMessages(target)
			raw, err := b.rest.RequestRaw(http.MethodPost, endpoint, contentType, body, endpoint, 0, opts...)
			if err != nil {
				return nil, err
			}
			var m discordgo.Message
			return &m, json.Unmarshal(raw, &m)
		})
		if err != nil {
			return ids, b.apiError("send", err)
		}
		ids = append(ids, m.ID)
	}
	return ids, nil
}
