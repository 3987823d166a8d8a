package telegram

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// visible returns what the user sees of the chunks, one string per chunk, failing the test
// when Telegram would refuse a chunk or find it too long (it counts UTF-16 units after
// entity parsing).
func visibleChunks(t *testing.T, chunks []chunk) []string {
	t.Helper()
	var out []string
	for i, c := range chunks {
		plain := c.text
		if c.html {
			var err error
			if plain, err = telegramtest.ParseHTML(c.text); err != nil {
				t.Fatalf("chunk %d: Telegram would refuse it: %v", i, err)
			}
		}
		if n := channels.UTF16(plain); n > MaxMessage {
			t.Fatalf("chunk %d shows %d UTF-16 units, over %d", i, n, MaxMessage)
		}
		out = append(out, plain)
	}
	return out
}

// A long reply without whitespace is cut at a fixed length; a part that then begins with
// '>' was taken for a quote marker: a character lost and the part sent as a blockquote.
func TestChunksCutBeforeGreaterThan(t *testing.T) {
	for prefix := 0; prefix < 3; prefix++ {
		text := strings.Repeat("x", prefix) + strings.Repeat("<&>", 3000)
		chunks := renderChunks(text)
		for i, c := range chunks {
			if strings.Contains(c.text, "blockquote") {
				t.Errorf("prefix %d: chunk %d is sent as a quote: %.80q", prefix, i, c.text)
			}
		}
		if got := strings.Join(visibleChunks(t, chunks), ""); got != text {
			t.Errorf("prefix %d: the user sees %d characters, want %d (the text unchanged)", prefix, len(got), len(text))
		}
	}
}

// Telegram counts a message's length after entity parsing: "&lt;" is one character, so
// text heavy in <, & and > needs no more messages than its visible length asks for.
func TestChunksCountAfterEntityParsing(t *testing.T) {
	text := strings.Repeat("a<&>", 3000) // 12,000 visible characters, 39,000 as HTML
	chunks := renderChunks(text)
	if want := (channels.UTF16(text) + MaxMessage - 1) / MaxMessage; len(chunks) > want {
		t.Errorf("%d messages, want %d", len(chunks), want)
	}
	if got := strings.Join(visibleChunks(t, chunks), ""); got != text {
		t.Errorf("the user sees %d characters, want the text unchanged (%d)", len(got), len(text))
	}
}

// For random texts (Markdown, HTML-heavy, emoji, CJK, no whitespace), the chunks as the user
// sees them concatenate to the rendered original, and each is within Telegram's limit.
// Whitespace is left out of the comparison: cuts prefer line ends and spaces, and Telegram
// trims them at a message's edges.
func TestChunksProperty(t *testing.T) {
	pieces := map[string][]string{
		"markdown": {"**bold** ", "*it* ", "`code` ", "~~s~~ ", "[l](https://x.io/a?b&c) ", "\n> quote ", "\n- item ", "\n# head\n", "\n\n", "word ", "_u_ "},
		"html":     {"<b>", "</div>", "&amp;", "<&>", "a<b", ">", "&", "<", "\"q\"", "&lt;"},
		"emoji":    {"😀", "👍🏽", "🇩🇪", "👨‍👩‍👧‍👦", "e\u0301", " "},
		"cjk":      {"你好", "世界。", "日本語", "한국어", "，", "\n"},
		"nospace":  {"a", ">", "<", "&", "*", "_", "`", "x"},
		"fences":   {"```go\n", "x := 1 < 2\n", "```\n", "text > more\n", "\n"},
	}
	rng := rand.New(rand.NewSource(23))
	for name, set := range pieces {
		t.Run(name, func(t *testing.T) {
			for n := 0; n < 20; n++ {
				var b strings.Builder
				size := 1000 + rng.Intn(20000)
				for b.Len() < size {
					b.WriteString(set[rng.Intn(len(set))])
				}
				text := b.String()
				want, err := telegramtest.ParseHTML(RenderHTML(text))
				if err != nil {
					t.Fatalf("rendering %.60q: %v", text, err)
				}
				got := strings.Join(visibleChunks(t, renderChunks(text)), "")
				if strip(got) != strip(want) {
					t.Fatalf("text %d: the chunks show\n%.300q\nwant\n%.300q", n, strip(got), strip(want))
				}
			}
		})
	}
}

func strip(s string) string {
	return strings.Join(strings.Fields(s), "")
}
