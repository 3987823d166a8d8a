package discord

import (
	"bytes"
	"context"
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

// maxRequestFiles is how many bytes of files one message carries at most: Discord refuses a
// Create Message request over 25 MiB, files and payload_json together (413, code 40005);
// the rest is room for the payload and the multipart framing.
const maxRequestFiles = 25<<20 - 64<<10

// Parts of an outbox row past its text chunks, for their nonces: a message of files is
// numbered by its first file, a file sent alone after a 413 by its own, the notes last.
const (
	partBatch = 1000
	partAlone = 2000
	partNotes = 3000
)

// upload is one of a reply's files, read for sending.
type upload struct {
	index int // in out.Media
	media messages.Media
	name  string
	data  []byte
}

// sendFiles attaches a reply's files (multipart: payload_json and files[n]), as many per
// message as Discord takes: ten, 25 MiB a request. A file that cannot be sent (outside the
// workspace, over 10 MiB, refused by Discord as too large) is named in a note instead; the
// notes ride with the next message of files, or come last on their own.
func (b *Bot) sendFiles(ctx context.Context, target string, out messages.Outbound, reply bool) ([]string, error) {
	s := &fileSender{b: b, ctx: ctx, target: target, out: out, reply: reply && out.ReplyToID != ""}
	for i, m := range out.Media {
		u, err := b.readUpload(ctx, i, m)
		if err != nil {
			b.log.Warn().Err(err).Str("channel", target).Msg("discord: a reply's file was not sent")
			s.notes = append(s.notes, channels.MediaNote(m, err))
			continue
		}
		if len(s.batch) == maxFilesPerMessage || s.size+int64(len(u.data)) > maxRequestFiles {
			if err := s.flush(); err != nil {
				return s.ids, err
			}
		}
		s.batch, s.size = append(s.batch, u), s.size+int64(len(u.data))
	}
	if err := s.flush(); err != nil {
		return s.ids, err
	}
	if len(s.notes) > 0 {
		msg := s.message(partNotes)
		id, err := b.post(ctx, target, out, partNotes, msg, nil)
		if err != nil {
			return s.ids, b.apiError("send", err)
		}
		s.ids = append(s.ids, id)
	}
	return s.ids, nil
}

// readUpload reads one of a reply's files into memory (at most MaxUpload bytes), so that a
// request retried sends it whole again.
func (b *Bot) readUpload(ctx context.Context, i int, m messages.Media) (upload, error) {
	f, err := channels.OpenMedia(ctx, m, b.mediaClient, MaxUpload)
	if err != nil {
		return upload{}, err
	}
	defer f.Body.Close()
	data, err := io.ReadAll(f.Body)
	if err != nil {
		return upload{}, fmt.Errorf("%w: %v", channels.ErrMedia, err)
	}
	return upload{index: i, media: m, name: f.Name, data: data}, nil
}

// fileSender sends one reply's files, a batch at a time.
type fileSender struct {
	b      *Bot
	ctx    context.Context
	target string
	out    messages.Outbound
	reply  bool // the first message replies to out.ReplyToID

	batch []upload
	size  int64
	notes []string // for files not sent, not yet shown
	ids   []string
	sent  bool // a message went out (the reply reference is used)
}

// message is a message carrying the notes so far, replying when it is the first.
func (s *fileSender) message(part int) *messageSend {
	msg := &messageSend{MessageSend: discordgo.MessageSend{Content: noteText(s.notes), AllowedMentions: allowedMentions()}}
	s.notes = nil
	if s.reply && !s.sent {
		no := false
		msg.Reference = &discordgo.MessageReference{MessageID: s.out.ReplyToID, ChannelID: s.target, FailIfNotExists: &no}
	}
	return msg
}

// flush sends the batch as one message. When Discord refuses it as too large, each file
// is sent alone, and a file refused alone gets a note.
func (s *fileSender) flush() error {
	batch := s.batch
	s.batch, s.size = nil, 0
	if len(batch) == 0 {
		return nil
	}
	notes := s.notes
	err := s.send(partBatch+batch[0].index, batch)
	if !tooLarge(err) {
		return err
	}
	s.notes = notes // the refused message did not show them
	for _, u := range batch {
		if len(batch) > 1 {
			err = s.send(partAlone+u.index, []upload{u})
		}
		if tooLarge(err) {
			s.b.log.Warn().Str("channel", s.target).Str("file", u.name).Msg("discord: a reply's file was refused as too large")
			s.notes = append(s.notes, channels.MediaNote(u.media, fmt.Errorf("%w: Discord refused it as too large", channels.ErrMedia)))
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// send posts files as one message; a refusal as too large is returned as is, for flush.
func (s *fileSender) send(part int, files []upload) error {
	msg := s.message(part)
	df := make([]*discordgo.File, len(files))
	for i, u := range files {
		df[i] = &discordgo.File{Name: u.name, Reader: bytes.NewReader(u.data)}
	}
	id, err := s.b.post(s.ctx, s.target, s.out, part, msg, df)
	if tooLarge(err) {
		return err
	}
	if err != nil {
		return s.b.apiError("send", err)
	}
	s.ids, s.sent = append(s.ids, id), true
	return nil
}

// tooLarge reports whether Discord refused a request as too large (413).
func tooLarge(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusRequestEntityTooLarge
}

// noteText joins the notes of files not sent, within one message's length.
func noteText(notes []string) string {
	text := strings.Join(notes, "\n")
	if r := []rune(text); len(r) > MaxMessage {
		text = string(r[:MaxMessage-1]) + "…"
	}
	return text
}
