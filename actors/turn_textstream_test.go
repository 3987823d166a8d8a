package actors

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/streaming"
)

// textStreamFor is a textStream that records what it shows, redacting secrets. Its clock
// moves on by tick at every look.
func textStreamFor(tick time.Duration, secrets ...string) (*textStream, *[]string) {
	var shown []string
	now := time.Unix(1e9, 0)
	clock := func() time.Time { now = now.Add(tick); return now }
	return &textStream{now: clock, red: newRedactor(secrets),
		show: func(text string) { shown = append(shown, text) }}, &shown
}

// feed writes text to s in random pieces (cut anywhere, inside words and UTF-8 sequences).
func feed(s *textStream, text string, rng *rand.Rand) {
	for text != "" {
		n := 1 + rng.IntN(min(len(text), 7))
		s.write(text[:n])
		text = text[n:]
	}
	s.end()
}

// An answer is shown word by word (CJK character by character) as it streams, never in half
// a word or a UTF-8 sequence; a line that may open a fence comes whole, a progress block not
// at all; the pieces make the answer.
func TestTextStreamGrowsByWords(t *testing.T) {
	const block = "```openclaw-process\n{\"type\": \"step\", \"id\": \"a\", \"title\": \"Fetch\", \"status\": \"running\"}\n```\n"
	answer := "Reef streams answers word by word: 流式输出按字增长 🙂 and more.\n" +
		block +
		"```go\nfmt.Println(\"你好\")\n```\n" +
		"The last line, with naïve café 🎉 and 完成。"
	want := strings.Replace(answer, block, "", 1)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		s, shown := textStreamFor(time.Second)
		feed(s, answer, rng)
		if got := strings.Join(*shown, ""); got != want {
			t.Fatalf("the pieces make %q, want %q", got, want)
		}
		midLine := false
		at := 0
		for _, p := range (*shown)[:len(*shown)-1] { // the last piece ends the answer
			at += len(p)
			next, size := utf8.DecodeRuneInString(want[at:])
			if streaming.WordEnd(want[:at]+string(next)) < at || size == 0 {
				t.Fatalf("a piece ends inside a word: %q | %q", want[max(0, at-10):at], want[at:min(len(want), at+10)])
			}
			if !strings.HasSuffix(p, "\n") {
				midLine = true
			}
			if strings.Contains(p, "openclaw") || strings.Contains(p, "\"step\"") {
				t.Errorf("a piece shows the progress block: %q", p)
			}
			for _, l := range strings.SplitAfter(p, "\n") {
				if strings.HasPrefix(l, "`") && strings.Contains(want, "\n"+l) && !strings.HasSuffix(l, "\n") {
					t.Errorf("a piece shows half a fence line: %q", p)
				}
			}
		}
		if !midLine {
			t.Fatalf("no piece ended inside a line: the answer was shown a line at a time: %q", *shown)
		}
	}
}

// Text that may be the start of a secret is held until the next piece shows it is not (or
// completes it, and it is redacted whole): no piece shows part of a secret, also a copy
// wrapped by whitespace.
func TestTextStreamHoldsSecretsBack(t *testing.T) {
	const key = "sk-live-0123456789abcdefXYZ"
	rng := rand.New(rand.NewPCG(5, 6))
	for _, answer := range []string{
		"Your key is " + key + " and nothing more.\n",
		"Wrapped: sk-live-01234 56789abcdefXYZ, see?\nNext line.",
		"Across lines: sk-live-0123456789\nabcdefXYZ done",
		"你的密钥是" + key + "，请保密。",
	} {
		for range 100 {
			s, shown := textStreamFor(time.Second, key)
			feed(s, answer, rng)
			got := strings.Join(*shown, "")
			if want := s.red.apply(answer); got != want {
				t.Fatalf("the pieces make %q, want %q", got, want)
			}
			for _, p := range *shown {
				for _, part := range []string{"01234", "56789", "abcdef", "XYZ"} {
					if strings.Contains(p, part) {
						t.Fatalf("a piece shows part of the secret: %q (of %q)", p, *shown)
					}
				}
			}
		}
	}
}

// OpenClaw writes a step's notes and a final's summary as arrays of strings; such blocks are
// recognised like the others, never shown in a piece of the stream, also when the answer ends
// with the block's closing fence and no newline (#33.12).
func TestTextStreamHidesOpenClawShapedBlocks(t *testing.T) {
	step := "```openclaw-process\n{\"type\": \"step\", \"id\": \"fetch\", \"title\": \"Fetch\", \"status\": \"done\", \"notes\": [\"got 3 pages\", \"one was empty\"]}\n```\n"
	final := "```openclaw-process\n{\"type\": \"final\", \"summary\": [\"Forecast fetched\", \"Tides tabled\"], \"artifacts\": [\"tides.md\"]}\n```"
	answer := "Here is the forecast.\n" + step + "High tide at 14:02.\n" + final
	want := "Here is the forecast.\nHigh tide at 14:02.\n"
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		s, shown := textStreamFor(time.Second)
		feed(s, answer, rng)
		got := strings.Join(*shown, "")
		if got != want || strings.Contains(got, "openclaw") || strings.Contains(got, "summary") {
			t.Fatalf("the pieces make %q, want %q", got, want)
		}
	}
}
