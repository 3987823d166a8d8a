package streaming

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
)

func TestWordEnd(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"hello", ""},
		{"hello wor", "hello "},
		{"hello world ", "hello world "},
		{"line one\nline tw", "line one\nline "},
		{"流式输出", "流式输出"}, // every CJK character is a word
		{"用Go写", "用Go写"}, // and ends the word before it
		{"用Go", "用"},     // Go may go on
		{"日本語のテキスト", "日本語のテキスト"}, // kana too
		{"한국어 텍스", "한국어 텍스"},     // Hangul syllables
		{"你好，世界。", "你好，世界。"},     // CJK punctuation
		{"ok 🙂", "ok "},          // an emoji is a word: it may be followed by a modifier
		{"ok 🙂 ", "ok 🙂 "},       //
		{"中文\xe4\xb8", "中文"},     // half of 中: never shown
		{"a \xf0\x9f\x99", "a "}, // half of 🙂
		{"tab\there", "tab\t"},   //
		{"x\u3000y", "x\u3000"},  // ideographic space
		{"naïve café", "naïve "}, // accents are letters
		{"https://example.com/a b", "https://example.com/a "},
	} {
		if got := c.in[:WordEnd(c.in)]; got != c.want {
			t.Errorf("WordEnd(%q) keeps %q, want %q", c.in, got, c.want)
		}
	}
}

func partialDraft(text string) *Draft {
	s := Defaults()
	s.Mode = Partial
	d := New(s, "c", nil)
	d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: text})
	return d
}

// The line being written is cut before a construct it opens and has not closed; an open
// code block is closed.
func TestPartialMarkdownIsSafe(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Some **bold text", "Some"},
		{"Some **bold** and *it", "Some **bold** and"},
		{"Some **bold** and *it* ", "Some **bold** and *it*"},
		{"call `fmt.Print", "call"},
		{"call `fmt.Println` now ", "call `fmt.Println` now"},
		{"a ``x ` y", "a"},
		{"see [the docs](https://exa", "see"},
		{"see [the docs](https://example.com) ", "see [the docs](https://example.com)"},
		{"see [the docs] ", "see [the docs]"}, // brackets, not a link
		{"see [the ", "see"},                  // may become a link
		{"~~gone ", "…"},                      // nothing before the open strike
		{"2 * 3 = 6 ", "2 * 3 = 6"},           // a lone * followed by a space opens nothing
		{"snake_case and ", "snake_case and"}, // an _ inside a word opens nothing
		{"**粗体**和*斜", "**粗体**和"},              // CJK grows by characters, constructs still held
		{"end with \\", "end with"},
		{"Done **so far**\nNow **more", "Done **so far**\nNow"},
		{"Old **open line\nnext ", "Old **open line\nnext"}, // a finished line is shown as written
		{"Code:\n```go\nfmt.Println(1)\nx := ", "Code:\n```go\nfmt.Println(1)\nx :=\n```"},
		{"Code:\n```go\nfmt.Println(1)\n``", "Code:\n```go\nfmt.Println(1)\n```"},
		{"Code:\n```go\nfmt.Println(1)\n```\nAfter ", "Code:\n```go\nfmt.Println(1)\n```\nAfter"},
		{"Code:\n```pyth", "Code:"},     // the fence line may still grow
		{"Code:\n```python\n", "Code:"}, // a block with nothing in it yet
		{"Code:\n`", "Code:"},
		{"```\n*not* `emphasis in code ", "```\n*not* `emphasis in code\n```"},
	} {
		if got := partialDraft(c.in).Render(); got != c.want {
			t.Errorf("partial draft of %q = %q, want %q", c.in, got, c.want)
		}
	}
}

// A partial draft fed an answer byte by byte (so pieces end inside words, UTF-8 sequences
// and Markdown) only ever shows whole words and safe Markdown, and grows to the answer.
func TestPartialGrowsByWords(t *testing.T) {
	answer := "Here is **the plan** for 今天的任务 🙂:\n" +
		"- read `notes.txt` and [the docs](https://example.com/x)\n" +
		"```go\nfmt.Println(\"你好\")\n```\n" +
		"Then *sum* it all up 🎉 and 完成。"
	d := partialDraft("")
	shown := ""
	for i := 0; i < len(answer); i++ {
		d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: answer[i : i+1]})
		got := d.Render()
		if got == "…" {
			continue
		}
		if !utf8.ValidString(got) {
			t.Fatalf("after %d bytes the draft %q is not valid UTF-8", i+1, got)
		}
		if n := countFences(got); n%2 != 0 {
			t.Errorf("after %d bytes the draft has %d fence lines: %q", i+1, n, got)
		}
		lines := strings.Split(got, "\n")
		if last := lines[len(lines)-1]; countFences(got) == 0 && openConstruct(last) != len(last) {
			t.Errorf("after %d bytes the draft's last line %q opens a construct it does not close", i+1, last)
		}
		text := got
		if !strings.HasPrefix(answer, text) {
			text = strings.TrimSuffix(text, "\n```") // the fence the draft closed
		}
		if !strings.HasPrefix(answer, text) {
			t.Fatalf("after %d bytes the draft %q is not the answer's beginning", i+1, got)
		}
		if rest := answer[len(text):]; rest != "" {
			before, _ := utf8.DecodeLastRuneInString(text)
			after, _ := utf8.DecodeRuneInString(rest)
			if !isBreak(before) && !isBreak(after) {
				t.Errorf("after %d bytes the draft %q cuts a word (%q follows)", i+1, got, rest[:min(8, len(rest))])
			}
		}
		if len(text) < len(shown) {
			t.Errorf("after %d bytes the draft shrank from %q to %q", i+1, shown, text)
		}
		shown = text
	}
	if got := d.Render(); got != strings.TrimSuffix(answer, "完成。")+"完成。" {
		t.Errorf("the whole answer (it ends with a CJK character) shows as %q", got)
	}
	d2 := partialDraft("Let me check the files.")
	if got := d2.Render(); got != "Let me check the" {
		t.Errorf("before the step ends = %q", got)
	}
	if !d2.Apply(tool(messages.ToolStarted, "1", "read a.txt", false)) || d2.Render() != "Let me check the files." {
		t.Errorf("once a tool call follows the text, its last word shows: %q", d2.Render())
	}
}

func countFences(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if isFenceLine(l) {
			n++
		}
	}
	return n
}

// block.minChars counts characters, not bytes: Chinese text (3 bytes a character) and emoji
// (4) are cut no more often than English.
func TestBlockMinCharsCountsCharacters(t *testing.T) {
	for _, c := range []struct {
		name, text string
		show       bool
	}{
		{"chinese under", strings.Repeat("流式输出", 7), false},                  // 28 characters, 84 bytes
		{"chinese over", strings.Repeat("流式输出", 8) + "好", true},              // 33 characters
		{"emoji under", strings.Repeat("🙂 ", 14), false},                     // 28 characters, 70 bytes
		{"english under", strings.Repeat("word ", 5) + "word", false},        // 29 characters
		{"english over", strings.Repeat("word ", 6) + "word", true},          // 34 characters
		{"after a paragraph", "Intro.\n\n" + strings.Repeat("好", 25), false}, // 25 since the paragraph
	} {
		s := Defaults()
		s.Mode, s.BlockMinChars = Block, 30
		d := New(s, "c", nil)
		d.Apply(messages.TurnEvent{Kind: messages.TextStreamed, StepID: "1", Text: c.text})
		got := d.Render()
		if shown := got != "…" && got != "Intro."; shown != c.show {
			t.Errorf("%s: %d characters (%d bytes) show %q, want shown %v", c.name,
				utf8.RuneCountInString(c.text), len(c.text), got, c.show)
		}
		if c.show && !strings.HasPrefix(c.text, got) {
			t.Errorf("%s: shows %q, not the text's beginning", c.name, got)
		}
	}
}

// Every length a draft keeps to counts characters: a progress line's maxLineChars and the
// answer's cap, with Chinese and emoji.
func TestDraftLengthsCountCharacters(t *testing.T) {
	s := Defaults()
	s.Label, s.MaxLineChars = "", 12
	d := New(s, "c", nil)
	d.Apply(tool(messages.ToolStarted, "1", "读取"+strings.Repeat("文件", 10), false))
	d.Apply(tool(messages.ToolStarted, "2", "🙂"+strings.Repeat("🎉", 20), false))
	want := "▸ 读取文件文件文件文…\n▸ 🙂🎉🎉🎉🎉🎉🎉🎉🎉…"
	if got := d.Render(); got != want {
		t.Errorf("progress lines = %q, want %q", got, want)
	}
	for _, piece := range []string{"流", "🙂 ", "文字 "} {
		d := partialDraft(strings.Repeat(piece, 3000))
		got := d.Render()
		if n := utf8.RuneCountInString(got); n > maxRunes || n < maxRunes-10 {
			t.Errorf("a long partial draft of %q has %d characters, want %d at most and near it", piece, n, maxRunes)
		}
		if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
			t.Errorf("a long partial draft of %q ends %q", piece, got[len(got)-12:])
		}
	}
}

// A cut line never ends inside an emoji made of several runes, a flag or an accented letter.
func TestLineCutKeepsCharactersWhole(t *testing.T) {
	family := "👨\u200d👩\u200d👧" // five runes, one character
	for _, c := range []struct{ label, want string }{
		{"aaaaaaaaa" + family + "bbbb", "▸ aaaaaaaaa…"},
		{"aaaaaaaa" + family + "bbbb", "▸ aaaaaaaa…"},
		{"aaaaaaaaa🇨🇳🇺🇸bbbb", "▸ aaaaaaaaa…"},
		{"aaaaaaaa🇨🇳🇺🇸bbbb", "▸ aaaaaaaa…"},
		{"aaaaaaa🇨🇳🇺🇸bbbb", "▸ aaaaaaa🇨🇳…"},
		{"aaaaaaaaa👍🏽bbbb", "▸ aaaaaaaaa…"},
		{"aaaaaaaaae\u0301bbbb", "▸ aaaaaaaaa…"},
	} {
		s := Defaults()
		s.Label, s.MaxLineChars = "", 12
		d := New(s, "c", nil)
		d.Apply(tool(messages.ToolStarted, "1", c.label, false))
		if got := d.Render(); got != c.want {
			t.Errorf("line of %q = %q, want %q", c.label, got, c.want)
		}
	}
}
