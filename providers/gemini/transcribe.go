package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/internal/reqbody"
)

var _ providers.Transcriber = (*Client)(nil)

// MaxInlineRequest is the largest generateContent request Gemini takes (20 MB, inline files
// included); audio is sent inline, base64-encoded, so about 15 MB of audio fits.
const MaxInlineRequest = 20 << 20

// transcribePrompt asks for the words only: the transcript is handed to the agent as what the
// person said, so commentary or a summary would put words in their mouth.
const transcribePrompt = "Transcribe this audio recording verbatim, in the language spoken. " +
	"Answer with the transcript only: no introduction, no timestamps, no speaker labels, no commentary. " +
	"If nothing is spoken, answer with an empty text."

// Transcribe sends audio inline to POST /v1beta/models/{model}:generateContent with an
// instruction to transcribe it, and returns the text of the answer. Errors are classified as
// the stream's are (rate limit, overload, auth...), so providers.RetryTranscribe can retry.
func (c *Client) Transcribe(ctx context.Context, model, mime string, audio []byte) (string, error) {
	model = strings.TrimPrefix(model, "models/")
	if n := base64.StdEncoding.EncodedLen(len(audio)) + len(transcribePrompt) + 1024; n > MaxInlineRequest {
		return "", fmt.Errorf("%s: transcribe: %d MB of audio is over the %d MB Gemini takes in one request",
			c.name, len(audio)>>20, MaxInlineRequest*3/4>>20)
	}
	req := struct {
		Contents []content `json:"contents"`
	}{[]content{{Role: "user", Parts: []part{
		{Text: transcribePrompt},
		{InlineData: &inlineData{MimeType: audioMIME(mime), Data: audio}},
	}}}}
	raw, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("%s: transcribe: %w", c.name, err)
	}
	resp, err := c.do(ctx, http.MethodPost, "/v1beta/models/"+url.PathEscape(model)+":generateContent", reqbody.Body{raw})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text    string `json:"text"`
					Thought bool   `json:"thought"`
				} `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		PromptFeedback struct {
			BlockReason string `json:"blockReason"`
		} `json:"promptFeedback"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&out); err != nil {
		return "", fmt.Errorf("%s: transcribe: decode: %w", c.name, err)
	}
	if out.PromptFeedback.BlockReason != "" {
		return "", fmt.Errorf("%s: transcribe: the request was blocked (%s)", c.name, out.PromptFeedback.BlockReason)
	}
	if len(out.Candidates) == 0 {
		return "", fmt.Errorf("%s: transcribe: the answer holds no candidate", c.name)
	}
	var b strings.Builder
	for _, p := range out.Candidates[0].Content.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return strings.TrimSpace(b.String()), nil
}

// audioMIME is the type Gemini knows an audio file by: audio/wav, mp3, aiff, aac, ogg, flac.
// Voice notes come as Ogg Opus under several names.
func audioMIME(mime string) string {
	mime = strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	switch mime {
	case "", "audio/opus", "application/ogg", "audio/oga":
		return "audio/ogg"
	case "audio/mpeg":
		return "audio/mp3"
	case "audio/x-wav", "audio/wave":
		return "audio/wav"
	}
	return mime
}
