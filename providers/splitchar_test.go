package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/reefgw/reef/providers"
)

// TestJoinerAcrossChunks decodes chunks the way the clients do (ChunkBytes, then JSON) and
// joins their deltas: surrogate escapes and raw UTF-8 bytes cut across chunks come back whole;
// a half that never gets its other half is U+FFFD, never invalid text.
func TestJoinerAcrossChunks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string // JSON string literals, one per chunk
		want   string
	}{
		{"surrogate pair cut", []string{`"a\ud83d"`, `"\ude00b"`}, "a😀b"},
		{"pair whole in one chunk", []string{`"a\ud83d\ude00b"`}, "a😀b"},
		{"upper-case escapes", []string{`"\uD83C"`, `"\uDF89"`}, "🎉"},
		{"escaped backslash is not an escape", []string{`"\\ud83d"`}, `\ud83d`},
		{"UTF-8 bytes cut", []string{"\"a\xe4\xb8\"", "\"\xadb\""}, "a中b"},
		{"four-byte sequence cut thrice", []string{"\"\xf0\x9f\"", "\"\x98\"", "\"\x80\""}, "😀"},
		{"lone high surrogate at the end", []string{`"a\ud83d"`}, "a\uFFFD"},
		{"lone low surrogate", []string{`"\ude00a"`}, "\uFFFDa"},
		{"high then text", []string{`"\ud83d"`, `"x"`}, "\uFFFDx"},
		{"invalid byte", []string{"\"a\xffb\""}, "a\uFFFDb"},
		{"plain", []string{`"héllo"`, `" 世界"`}, "héllo 世界"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var j providers.Joiner
			got := ""
			for _, c := range tt.chunks {
				var s string
				if err := json.Unmarshal(providers.ChunkBytes(c), &s); err != nil {
					t.Fatalf("decode %q: %v", c, err)
				}
				got += j.Push(s)
			}
			got += j.Flush()
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
