package openaiapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/messages"
)

// Images in requests. An image_url part of the new turn becomes a Media of its message, like
// a photo sent on a platform: the run saves it into the agent's workspace under the media
// limits (the Turn's fetch, through Channel.Fetch) and a vision model gets its bytes. A data
// URL is decoded; an https URL is downloaded with the channel's media client, which the
// gateway builds behind the SSRF guard (internal/netguard).

var _ channels.Fetcher = (*Channel)(nil)

// SetMediaClient sets the client that downloads images given by URL; call it before Run.
// Without one such images get a note that they were not downloaded.
func (c *Channel) SetMediaClient(client *http.Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.web = client
}

// Fetch opens an image of a request: a data URL's bytes, or the download of an https URL.
func (c *Channel) Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error) {
	if strings.HasPrefix(m.Ref, "data:") {
		_, data, err := decodeDataURL(m.Ref)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", channels.ErrPermanent, err)
		}
		return io.NopCloser(bytes.NewReader(data)), nil
	}
	c.mu.Lock()
	web := c.web
	c.mu.Unlock()
	if web == nil {
		return nil, fmt.Errorf("%w: reef fetches no image URLs here", channels.ErrPermanent)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.Ref, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", channels.ErrPermanent, err)
	}
	resp, err := web.Do(req)
	if errors.Is(err, netguard.ErrBlocked) { // the SSRF guard refused it: trying again will not help
		return nil, fmt.Errorf("%w: %w", channels.ErrPermanent, err)
	}
	if err != nil {
		return nil, fmt.Errorf("fetch image: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		err := fmt.Errorf("fetch image: HTTP %d", resp.StatusCode)
		if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			err = fmt.Errorf("%w: %w", channels.ErrPermanent, err)
		}
		return nil, err
	}
	return resp.Body, nil
}

// decodeDataURL returns a data URL's MIME type and bytes (base64 or percent-encoded).
func decodeDataURL(u string) (string, []byte, error) {
	head, body, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !ok {
		return "", nil, errors.New("a data URL without a comma")
	}
	mime, b64 := strings.CutSuffix(head, ";base64")
	if !b64 {
		s, err := url.PathUnescape(body)
		return mime, []byte(s), err
	}
	data, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(body, "="))
	}
	if err != nil {
		return "", nil, fmt.Errorf("a data URL that is not base64: %w", err)
	}
	return mime, data, nil
}

// imageMedia is the Media of the n-th image_url part: a data URL of an image type, or an https URL.
func imageMedia(n int, ref string) (messages.Media, error) {
	if strings.HasPrefix(ref, "data:") {
		mime, data, err := decodeDataURL(ref)
		if err != nil {
			return messages.Media{}, err
		}
		mime = strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
		if !strings.HasPrefix(mime, "image/") {
			return messages.Media{}, fmt.Errorf("an image_url data URL of type %q; an image type (image/png, image/jpeg, ...) is needed", mime)
		}
		return messages.Media{Kind: messages.MediaImage, Name: fmt.Sprintf("image-%d.%s", n, strings.TrimPrefix(mime, "image/")),
			MIME: mime, Size: int64(len(data)), Ref: ref}, nil
	}
	u, err := url.Parse(ref)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return messages.Media{}, errors.New("image_url.url must be a data: URL or an https URL")
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" {
		name = fmt.Sprintf("image-%d", n)
	}
	return messages.Media{Kind: messages.MediaImage, Name: name, Ref: ref}, nil
}
