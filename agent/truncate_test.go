package agent

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToolResultCap(t *testing.T) {
	tests := []struct {
		window int
		want   int
	}{
		{0, 16_000},       // unknown
		{-1, 16_000},      // unknown
		{8_192, 9_830},    // 30% of 8,192 tokens × 4 chars
		{13_333, 15_999},  // 30% rule still below the tier
		{32_000, 16_000},  // small tier
		{63_999, 16_000},  // just under 64k
		{64_000, 32_000},  // medium tier
		{128_000, 32_000}, // medium tier
		{199_999, 32_000}, // just under 200k
		{200_000, 64_000}, // large tier
		{1_047_576, 64_000},
		{10, 12}, // absurdly small window: still 30%
	}
	for _, tt := range tests {
		if got := ToolResultCap(tt.window); got != tt.want {
			t.Errorf("ToolResultCap(%d) = %d, want %d", tt.window, got, tt.want)
		}
	}
}

// lines makes n numbered lines of about 40 characters.
func lines(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("-", 30))
		b.WriteString(" line ")
		b.WriteString(strings.Repeat("x", i%3))
		b.WriteString("\n")
	}
	return b.String()
}

func TestTruncateToolResult(t *testing.T) {
	plain := lines(5_000, "out")                                        // ~200k chars, unimportant tail
	failing := plain + "FAIL: TestThing\nexit code 1\n"                 // important tail
	traceback := plain + "Traceback (most recent call last):\n  boom\n" // important tail
	tests := []struct {
		name     string
		text     string
		window   int
		wantTail bool
	}{
		{"small window, plain", plain, 32_000, false},
		{"medium window, plain", plain, 128_000, false},
		{"large window, plain", plain, 400_000, false},
		{"tiny window, plain", plain, 8_192, false},
		{"small window, failing", failing, 32_000, true},
		{"medium window, traceback", traceback, 128_000, true},
		{"large window, failing", failing, 1_000_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := ToolResultCap(tt.window)
			got := TruncateToolResult(tt.text, tt.window)
			if n := utf8.RuneCountInString(got); n > limit || n < limit*9/10 {
				t.Errorf("result has %d characters, want at most %d and not much less", n, limit)
			}
			head, after, ok := strings.Cut(got, "\n\n[… ")
			if !ok {
				t.Fatal("no truncation notice")
			}
			notice, tail, _ := strings.Cut(after, "]\n\n")
			if !strings.HasPrefix(tt.text, head) || !strings.HasSuffix(head, "\n") {
				t.Errorf("head is not the start of the text cut at a line end: ...%q", head[max(0, len(head)-40):])
			}
			if !strings.Contains(notice, "characters cut") || !strings.Contains(notice, "offset") {
				t.Errorf("notice = %q, want how much was cut and how to get the rest", notice)
			}
			if tt.wantTail {
				if tail == "" || !strings.HasSuffix(tt.text, tail) || !strings.Contains(notice, "the middle") {
					t.Errorf("tail = %q…, notice %q; want the end of the text kept", tail[:min(len(tail), 60)], notice)
				}
			} else if tail != "" || !strings.Contains(notice, "the rest") {
				t.Errorf("tail = %q…, notice %q; want head only", tail[:min(len(tail), 60)], notice)
			}
			// The notice reports exactly what is missing.
			cut := utf8.RuneCountInString(tt.text) - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
			if want := "[… " + strconv.Itoa(cut) + " of "; !strings.Contains(got, want) {
				t.Errorf("notice %q does not report %d characters cut", notice, cut)
			}
		})
	}
}

func TestTruncateToolResultUnderCapUnchanged(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat("é", 16_000), strings.Repeat("a", 16_000)} {
		if got := TruncateToolResult(s, 32_000); got != s {
			t.Errorf("text of %d characters changed", utf8.RuneCountInString(s))
		}
	}
}

func TestTruncateToolResultRuneSafe(t *testing.T) {
	tests := []string{
		strings.Repeat("日本語のテキスト", 5_000),                 // 3-byte runes, no newlines
		strings.Repeat("🙂", 40_000) + " error at the end", // 4-byte runes with an important tail
		strings.Repeat("a\xffb", 20_000),                  // invalid UTF-8
	}
	for _, s := range tests {
		got := TruncateToolResult(s, 16_000)
		if !utf8.ValidString(got) {
			t.Errorf("result is not valid UTF-8")
		}
		if n := utf8.RuneCountInString(got); n > ToolResultCap(16_000) {
			t.Errorf("result has %d characters, cap %d", n, ToolResultCap(16_000))
		}
	}
}

func FuzzTruncateToolResult(f *testing.F) {
	f.Add("hello", 100)
	f.Add(strings.Repeat("日本", 300)+"\nerror: boom", 50)
	f.Add(strings.Repeat("x\n", 500), 0)
	f.Add("\xff\xfe\xfd", 1)
	f.Fuzz(func(t *testing.T, text string, window int) {
		window %= 300_000 // keep the caps reachable by fuzzed inputs
		got := TruncateToolResult(text, window)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if n, limit := utf8.RuneCountInString(got), ToolResultCap(window); n > limit {
			t.Fatalf("%d characters, cap %d", n, limit)
		}
		if utf8.ValidString(text) && utf8.RuneCountInString(text) <= ToolResultCap(window) && got != text {
			t.Fatalf("text under the cap changed")
		}
	})
}
