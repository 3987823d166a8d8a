package exec

import (
	"strings"
	"testing"
)

func TestCapped(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly full", 6, []string{"abc", "def"}, "abcdef"},
		{"one big write", 6, []string{"abcdefghij"}, "abc\n[... 4 bytes omitted ...]\nhij"},
		{"many small writes", 6, []string{"ab", "cd", "ef", "gh", "ij", "kl", "mn"}, "abc\n[... 8 bytes omitted ...]\nlmn"},
		{"rune boundaries", 8, []string{"ééééééé"}, "éé\n[... 6 bytes omitted ...]\néé"},
		{"runes are not split", 7, []string{"ééééééé"}, "é\n[... 8 bytes omitted ...]\néé"},
		{"tail rune not split", 6, []string{"aéééééé"}, "aé\n[... 8 bytes omitted ...]\né"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapped(tt.max)
			for _, w := range tt.writes {
				if n, err := c.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write returned %d, %v", n, err)
				}
			}
			if got := c.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCappedLongStream(t *testing.T) {
	c := newCapped(100)
	for i := 0; i < 10000; i++ {
		c.Write([]byte("0123456789"))
	}
	got := c.String()
	if !strings.HasPrefix(got, strings.Repeat("0123456789", 5)+"\n[... 99900 bytes omitted ...]\n") ||
		!strings.HasSuffix(got, "\n"+strings.Repeat("0123456789", 5)) {
		t.Errorf("got %q", got)
	}
}
