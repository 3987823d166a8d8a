package openaiapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/netguard"
	"github.com/reefgw/reef/messages"
)

// Channel.Fetch opens what the Turn saves of a request's images: a data URL's bytes, an https
// URL through the media client; a URL it cannot fetch is a permanent failure.
func TestChannelFetchImages(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cat.png" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("\x89PNG cat"))
	}))
	defer srv.Close()
	ch := NewChannel(zerolog.Nop())
	read := func(ref string) (string, error) {
		t.Helper()
		body, err := ch.Fetch(context.Background(), messages.Media{Kind: messages.MediaImage, Ref: ref})
		if err != nil {
			return "", err
		}
		defer body.Close()
		b, err := io.ReadAll(body)
		return string(b), err
	}
	if got, err := read("data:image/png;base64,iVBORw0KGgo="); err != nil || got != "\x89PNG\r\n\x1a\n" {
		t.Errorf("data URL: %q, %v", got, err)
	}
	if _, err := read(srv.URL + "/cat.png"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("an https URL without a media client: %v, want a permanent failure", err)
	}
	ch.SetMediaClient(srv.Client())
	if got, err := read(srv.URL + "/cat.png"); err != nil || got != "\x89PNG cat" {
		t.Errorf("https URL: %q, %v", got, err)
	}
	if _, err := read(srv.URL + "/missing.png"); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("a 404: %v, want a permanent failure", err)
	}
	guard, err := netguard.New(netguard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ch.SetMediaClient(guard.Client(time.Minute, 5)) // the gateway's: srv is on this machine
	if _, err := read(srv.URL + "/cat.png"); !errors.Is(err, netguard.ErrBlocked) || !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("a URL on this machine through the SSRF guard: %v, want refused for good", err)
	}
}
