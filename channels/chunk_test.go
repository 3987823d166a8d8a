package channels

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitPrefersParagraphsOutsideFences(t *testing.T) {
	text := "intro paragraph\n\n```go\nfunc a() {}\n\nfunc b() {}\n```\n\nafter the code"
	chunks := Split(text, 50, Runes)
	if strings.Join(chunks, "") != text {
		t.Fatalf("chunks do not concatenate back: %q", chunks)
	}
	if chunks[0] != "intro paragraph\n\n" {
		t.Errorf("first chunk = %q, want the cut at the paragraph break before the fence", chunks[0])
	}
	for _, c := range BalanceFences(chunks) {
		if strings.Count(c, "```")%2 != 0 {
			t.Errorf("chunk %q has an unbalanced fence", c)
		}
	}
}

func TestSplitKeepsClustersWhole(t *testing.T) {
	cases := map[string]string{
		"surrogates": strings.Repeat("😀", 10),
		"family":     strings.Repeat("👨‍👩‍👧‍👦", 5),
		"flags":      strings.Repeat("🇫🇷🇩🇪", 5),
		"combining":  strings.Repeat("e\u0301", 10),
		"skin":       strings.Repeat("👍🏽", 8),
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			for limit := 1; limit < 30; limit++ {
				chunks := Split(text, limit, UTF16)
				if strings.Join(chunks, "") != text {
					t.Fatalf("limit %d: chunks do not concatenate back", limit)
				}
				for _, c := range chunks {
					if !utf8.ValidString(c) {
						t.Fatalf("limit %d: chunk %q is not valid UTF-8", limit, c)
					}
					if !clusterBoundary(text+" ", len(c)) && len(c) < len(text) && UTF16(c) <= limit && c != chunks[len(chunks)-1] {
						// a chunk may only end inside a cluster when the cluster alone exceeds the limit
						first, _ := utf8.DecodeRuneInString(c)
						if UTF16(string(first)) <= limit && limit >= 11 {
							t.Errorf("limit %d: chunk %q ends inside a cluster", limit, c)
						}
					}
				}
			}
		})
	}
}

func TestUTF16(t *testing.T) {
	if got := UTF16("a😀é"); got != 4 {
		t.Errorf("UTF16 = %d, want 4", got)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello world\n\n```\ncode\n```\n", 7)
	f.Add(strings.Repeat("😀 ", 50), 5)
	f.Add("e\u0301e\u0301\n\n🇫🇷🇫🇷", 3)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if !utf8.ValidString(text) || limit < 2 || limit > 5000 {
			return
		}
		for _, m := range []Measure{Runes, UTF16} {
			chunks := Split(text, limit, m)
			if strings.Join(chunks, "") != text {
				t.Fatalf("chunks do not concatenate back")
			}
			for _, c := range chunks {
				if !utf8.ValidString(c) {
					t.Fatalf("chunk not valid UTF-8: %q", c)
				}
				if m(c) > limit && utf8.RuneCountInString(c) > 1 {
					t.Fatalf("chunk %q measures %d > %d", c, m(c), limit)
				}
			}
		}
	})
}

func TestCapChunks(t *testing.T) {
	note := func(n int) string { return fmt.Sprintf("note %d", n) }
	tests := []struct {
		n, max int
		want   []string
	}{
		{3, 5, []string{"0", "1", "2"}},
		{5, 5, []string{"0", "1", "2", "3", "4"}},
		{6, 5, []string{"0", "1", "2", "3", "note 2"}},
		{30, 0, append(strings.Split("0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18", " "), "note 11")},
		{3, 1, []string{"note 3"}},
	}
	for _, tt := range tests {
		in := make([]string, tt.n)
		for i := range in {
			in[i] = strconv.Itoa(i)
		}
		if got := CapChunks(in, tt.max, note); !slices.Equal(got, tt.want) {
			t.Errorf("CapChunks(%d chunks, %d) = %v, want %v", tt.n, tt.max, got, tt.want)
		}
	}
}
