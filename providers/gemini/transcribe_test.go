package gemini_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini"
)

// TestTranscribe: the audio goes inline to :generateContent with an instruction to
// transcribe, under Gemini's name for its type; the answer's text comes back; the key is in
// no URL.
func TestTranscribe(t *testing.T) {
	c, script, srv := setup(t, fake.Reply{Text: "  buy milk tomorrow\n"})
	audio := append([]byte("OggS\x00\x02"), bytes.Repeat([]byte{9}, 3000)...)
	text, err := c.Transcribe(context.Background(), "gemini-2.5-flash", "audio/opus", audio)
	if err != nil {
		t.Fatal(err)
	}
	if text != "buy milk tomorrow" {
		t.Errorf("transcript %q, want the answer's text", text)
	}
	reqs := script.Requests()
	if len(reqs) != 1 || reqs[0].Model != "gemini-2.5-flash" || len(reqs[0].Messages) != 1 {
		t.Fatalf("requests %+v, want one with one user message", reqs)
	}
	m := reqs[0].Messages[0]
	if m.Role != messages.RoleUser || !strings.Contains(strings.ToLower(m.Content), "transcribe") {
		t.Errorf("the instruction is %q, want one to transcribe", m.Content)
	}
	if len(m.Media) != 1 || m.Media[0].MIME != "audio/ogg" || !bytes.Equal(m.Media[0].Data, audio) {
		t.Errorf("inline data %+v, want the audio as audio/ogg", m.Media)
	}
	for _, u := range srv.RequestURIs() {
		if !strings.HasSuffix(u, "/v1beta/models/gemini-2.5-flash:generateContent") || strings.Contains(u, canary) {
			t.Errorf("request to %s, want :generateContent without the key", u)
		}
	}
}

// TestTranscribeErrors: an error status is classified as the stream's are, without the key;
// retried through providers.RetryTranscribe a 503 then an answer succeeds; audio over the
// inline request limit is refused before anything is sent.
func TestTranscribeErrors(t *testing.T) {
	c, script, _ := setup(t, fake.Reply{Status: 429}, fake.Reply{Status: 503}, fake.Reply{Text: "hello"})
	_, err := c.Transcribe(context.Background(), "gemini-2.5-flash", "audio/ogg", []byte("OggS"))
	if !errors.Is(err, providers.ErrRateLimited) || strings.Contains(err.Error(), canary) {
		t.Errorf("429: %v, want ErrRateLimited without the key", err)
	}
	var waits []time.Duration
	r := providers.RetryTranscribe(c, providers.RetryConfig{MaxRetries: 2, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}})
	text, err := r.Transcribe(context.Background(), "gemini-2.5-flash", "audio/ogg", []byte("OggS"))
	if err != nil || text != "hello" || len(waits) != 1 {
		t.Errorf("retried: %q, %v after %d waits, want hello after one", text, err, len(waits))
	}
	n := len(script.Requests())
	_, err = c.Transcribe(context.Background(), "gemini-2.5-flash", "audio/ogg", make([]byte, gemini.MaxInlineRequest*3/4))
	if err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("oversized audio: %v, want a clear refusal", err)
	}
	if len(script.Requests()) != n {
		t.Error("oversized audio was sent")
	}
}
