package memory

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, World! v2_beta", []string{"hello", "world", "v2_beta"}},
		{"最喜欢的编程语言", []string{"最喜", "喜欢", "欢的", "的编", "编程", "程语", "语言"}},
		{"用户目前正在学习 Rust。", []string{"用户", "户目", "目前", "前正", "正在", "在学", "学习", "rust"}},
		{"Ｒｕｓｔ　ＡＢＣ", []string{"rust", "abc"}},    // full width folded
		{"我 love 猫", []string{"我", "love", "猫"}}, // single CJK characters stay
		{"カタカナとひらがな", []string{"カタ", "タカ", "カナ", "ナと", "とひ", "ひら", "らが", "がな"}},
		{"한국어 텍스트", []string{"한국", "국어", "텍스", "스트"}},
		{"INV-2024-017", []string{"inv", "2024", "017"}},
		{"bad\xffutf8", []string{"bad", "utf8"}},
		{"", nil},
		{"... !!! ---", nil},
	}
	for _, tt := range tests {
		if got := Tokenize(tt.in); !cmp.Equal(got, tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("a", 500)
	if got := Tokenize(long); len(got) != 1 || len(got[0]) != maxTokenRunes {
		t.Errorf("a 500-letter word gave %d tokens of %d runes, want one of %d", len(got), len(got[0]), maxTokenRunes)
	}
}

func FuzzTokenize(f *testing.F) {
	f.Add("用户目前正在学习 Rust。")
	f.Add("\xff\xfe ＡＢ")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokenize(s) {
			if tok == "" || strings.ContainsAny(tok, " \t\n") {
				t.Fatalf("bad token %q from %q", tok, s)
			}
		}
	})
}
