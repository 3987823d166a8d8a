package actors

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/messages"
)

// BenchmarkLoopSignature: the digest taken of every tool result, here a 16 KiB one.
func BenchmarkLoopSignature(b *testing.B) {
	c := messages.ToolCall{Name: "read", Arguments: `{"path": "notes/today.md", "offset": 0}`}
	r := messages.ChatMessage{Role: messages.RoleTool, Content: strings.Repeat("a line of the file\n", 16<<10/19)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loopSignature(c, r)
	}
}
