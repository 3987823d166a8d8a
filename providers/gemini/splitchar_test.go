package gemini_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/gemini"
	"github.com/reefgw/reef/providers/gemini/geminitest"
)

// TestCharactersCutAcrossChunks: a proxy that cuts every emoji's surrogate pair across two
// chunks loses no character of the text or the thoughts (#33.16).
func TestCharactersCutAcrossChunks(t *testing.T) {
	text, thoughts := "Done 😀 — see 🎉🎉 here 👍🏽", "thinking 🤔 hard"
	c, _, _ := setup(t, fake.Reply{Text: text, Reasoning: thoughts, SplitChars: true})
	evs, err := collect(t, c, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if gotText, gotThoughts, _, _ := summarize(evs); gotText != text || gotThoughts != thoughts {
		t.Errorf("got text %q thoughts %q, want %q and %q", gotText, gotThoughts, text, thoughts)
	}
}

// TestResponseBytesBounded: text past MaxResponseBytes stops the stream (#39.5).
func TestResponseBytesBounded(t *testing.T) {
	srv := geminitest.NewServer(fake.NewScript(fake.Reply{Text: strings.Repeat("x", 400_000)}))
	t.Cleanup(srv.Close)
	c := gemini.New(gemini.Config{BaseURL: srv.URL(), APIKey: canary, MaxResponseBytes: 64 << 10})
	if _, err := collect(t, c, userReq("hi")); !errors.Is(err, providers.ErrResponseTooLarge) {
		t.Fatalf("got %v, want ErrResponseTooLarge", err)
	}
}
