package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	slackapi "github.com/slack-go/slack"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// MaxUpload is the largest file the bot uploads. Slack takes up to 1 GB; reef keeps replies'
// files to what a chat reasonably carries.
const MaxUpload = 100 << 20

// Fetch downloads a file people shared from its url_private with the bot token. The request
// goes through the media client (the SSRF guard's), and only to Slack's own hosts (or the
// configured API's): the token is never sent anywhere else, and a redirect to another host
// drops it (net/http removes Authorization across hosts).
func (b *Bot) Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error) {
	if b.mediaClient == nil {
		return nil, errors.New("slack: no media client configured")
	}
	u, err := url.Parse(m.Ref)
	if err != nil || !b.tokenHost(u) {
		return nil, fmt.Errorf("slack: download: %q is not a Slack file URL", redactQuery(m.Ref))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.Ref, nil)
	if err != nil {
		return nil, fmt.Errorf("slack: download: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+b.cfg.BotToken)
	resp, err := b.mediaClient.Do(req)
	if err != nil {
		return nil, b.errorf(nil, "slack: download %s: %v", u.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("slack: download: %s answered %d", u.Host, resp.StatusCode)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && !strings.HasPrefix(m.MIME, "text/html") {
		// Without access (scope files:read missing), Slack answers with its sign-in page.
		resp.Body.Close()
		return nil, errors.New("slack: download: Slack answered with a sign-in page: does the app have the files:read scope?")
	}
	return resp.Body, nil
}

// tokenHost reports whether u may receive the bot token: https on slack.com or a subdomain,
// or the configured API's scheme and host.
func (b *Bot) tokenHost(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	if u.Scheme == "https" && (host == "slack.com" || strings.HasSuffix(host, ".slack.com") ||
		host == "slack-files.com" || strings.HasSuffix(host, ".slack-files.com")) {
		return true
	}
	return u.Scheme == b.apiURL.Scheme && strings.EqualFold(u.Host, b.apiURL.Host)
}

func redactQuery(raw string) string {
	base, _, _ := strings.Cut(raw, "?")
	return base
}

// sendMedia uploads a reply's files into its thread with Slack's upload flow
// (files.getUploadURLExternal, the upload, files.completeUploadExternal). A file that cannot
// be sent gets a short note in the chat instead.
func (b *Bot) sendMedia(ctx context.Context, out messages.Outbound, thread string) ([]string, error) {
	var ids []string
	for _, m := range out.Media {
		f, err := channels.OpenMedia(ctx, m, b.mediaClient, MaxUpload)
		if err == nil {
			err = b.upload(ctx, out.ChatID, thread, f)
			f.Body.Close()
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, channels.ErrMedia) && !errors.Is(err, channels.ErrPermanent) {
			return ids, err
		}
		b.log.Warn().Err(err).Str("chat", out.ChatID).Msg("slack: a reply's file was not sent")
		ts, perr := b.post(ctx, out.ChatID, thread, escape(channels.MediaNote(m, err)), "", 0, 0)
		if perr != nil {
			return ids, perr
		}
		ids = append(ids, ts)
	}
	return ids, nil
}

// upload sends one file with the external upload flow. Empty files are refused by Slack.
func (b *Bot) upload(ctx context.Context, chatID, thread string, f channels.MediaFile) error {
	if f.Size == 0 {
		return fmt.Errorf("%w: %s is empty", channels.ErrMedia, f.Name)
	}
	var target *slackapi.GetUploadURLExternalResponse
	err := b.call(ctx, "files.getUploadURLExternal", func() error {
		var err error
		target, err = b.api.GetUploadURLExternalContext(ctx, slackapi.GetUploadURLExternalParameters{
			FileName: f.Name, FileSize: int(f.Size)})
		return err
	})
	if err != nil {
		return err
	}
	body, err := f.Reader()
	if err != nil {
		return err
	}
	if err := b.api.UploadToURL(ctx, slackapi.UploadToURLParameters{UploadURL: target.UploadURL, Reader: body, Filename: f.Name}); err != nil {
		return b.apiError("upload", err)
	}
	return b.call(ctx, "files.completeUploadExternal", func() error {
		_, err := b.api.CompleteUploadExternalContext(ctx, slackapi.CompleteUploadExternalParameters{
			Files: []slackapi.FileSummary{{ID: target.FileID, Title: f.Name}}, Channel: chatID, ThreadTimestamp: thread})
		return err
	})
}
