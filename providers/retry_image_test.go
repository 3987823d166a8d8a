package providers_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
)

// imageRefuser is a provider that refuses, as Anthropic does, any request with image bytes;
// it records the requests it got.
type imageRefuser struct {
	mu   sync.Mutex
	reqs []providers.Request
}

func (p *imageRefuser) Stream(_ context.Context, req providers.Request) (providers.Stream, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	for _, m := range req.Messages {
		for _, md := range m.Media {
			if len(md.Data) > 0 {
				return nil, &providers.APIError{Provider: "anthropic", Status: 400, Kind: providers.ErrBadRequest,
					Message: "invalid_request_error: messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 6195888 bytes > 5242880 bytes"}
			}
		}
	}
	return textDeltas("answered"), nil
}

func imageRequest() providers.Request {
	return providers.Request{Model: "m", System: "sys", Messages: []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "look [image: inbox/a.jpg]", Media: []messages.Media{{Kind: messages.MediaImage, MIME: "image/jpeg", Path: "inbox/a.jpg", Data: []byte("jpeg")}}},
		{Role: messages.RoleAssistant, Content: "seen"},
		{Role: messages.RoleUser, Content: "and now?"},
	}}
}

// TestRetryWithoutRefusedImages: a request refused because of an image is sent once more
// without image bytes, with a note to the model, so the conversation goes on (#33.7).
func TestRetryWithoutRefusedImages(t *testing.T) {
	p := &imageRefuser{}
	req := imageRequest()
	a, err := call(context.Background(), providers.Retry(p, providers.RetryConfig{Sleep: (&sleeps{}).Sleep}), req)
	if err != nil {
		t.Fatalf("got %v, want the request answered without its images", err)
	}
	if a.Text != "answered" || len(p.reqs) != 2 {
		t.Fatalf("got %q after %d requests, want the answer after 2", a.Text, len(p.reqs))
	}
	second := p.reqs[1]
	if len(second.Messages[0].Media) != 1 || len(second.Messages[0].Media[0].Data) != 0 || second.Messages[0].Media[0].Path != "inbox/a.jpg" {
		t.Errorf("second request's media = %+v, want the image's path without bytes", second.Messages[0].Media)
	}
	if !strings.Contains(second.SystemTail, "images of this conversation were not sent") || !strings.Contains(second.SystemTail, "image exceeds 5 MB") {
		t.Errorf("second request's note = %q", second.SystemTail)
	}
	if len(req.Messages[0].Media[0].Data) == 0 {
		t.Error("the caller's request was changed")
	}
}

// TestRetryOtherBadRequestNotRepeated: a 400 that is not about an image, or a request
// without images, is not sent again.
func TestRetryOtherBadRequestNotRepeated(t *testing.T) {
	for name, tc := range map[string]struct {
		msg string
		req providers.Request
	}{
		"not about an image": {"invalid_request_error: max_tokens: must be positive", imageRequest()},
		"no image":           {"invalid_request_error: image exceeds 5 MB maximum", providers.Request{Model: "m", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			p := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){func(providers.Request) (providers.Stream, error) {
				return nil, &providers.APIError{Provider: "x", Status: 400, Kind: providers.ErrBadRequest, Message: tc.msg}
			}}}
			_, err := call(context.Background(), providers.Retry(p, providers.RetryConfig{Sleep: (&sleeps{}).Sleep}), tc.req)
			if !errors.Is(err, providers.ErrBadRequest) || p.count() != 1 {
				t.Errorf("got %v after %d calls, want the 400 after 1", err, p.count())
			}
		})
	}
}
