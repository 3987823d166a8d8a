package memory

import (
	"fmt"
	"strings"
	"testing"
)

func TestSplitChunksSmallFileIsOneChunk(t *testing.T) {
	got := splitChunks("# Prefs\n\nI like tea.\n", 400, 80)
	if len(got) != 1 || got[0].StartLine != 1 || got[0].EndLine != 3 {
		t.Fatalf("got %+v, want one chunk of lines 1-3", got)
	}
	if splitChunks(" \n\n", 400, 80) != nil {
		t.Error("a blank file gave chunks")
	}
}

// TestSplitChunksSizesAndOverlap: chunks stay near the size, cover every line, overlap the
// previous chunk's end, and prefer to start at a heading.
func TestSplitChunksSizesAndOverlap(t *testing.T) {
	var b strings.Builder
	for s := 0; s < 20; s++ {
		fmt.Fprintf(&b, "## Section %d\n\n", s)
		for p := 0; p < 3; p++ {
			fmt.Fprintf(&b, "%s\n\n", strings.Repeat(fmt.Sprintf("word%d ", p), 40)) // ~70 tokens
		}
	}
	text := b.String()
	lines := strings.Count(text, "\n")
	chunks := splitChunks(text, 400, 80)
	if len(chunks) < 5 {
		t.Fatalf("got %d chunks, want several", len(chunks))
	}
	covered := 0
	for i, c := range chunks {
		if tok := estimateTokens(c.Text); tok > 400+80 {
			t.Errorf("chunk %d has %d tokens, want about 400", i, tok)
		}
		if i > 0 {
			prev := chunks[i-1]
			if c.StartLine > prev.EndLine {
				t.Errorf("chunk %d starts at %d after the previous ended at %d: no overlap", i, c.StartLine, prev.EndLine)
			}
			if c.StartLine <= prev.StartLine {
				t.Errorf("chunk %d does not advance (%d after %d)", i, c.StartLine, prev.StartLine)
			}
		}
		covered = c.EndLine
	}
	if covered != lines {
		t.Errorf("chunks end at line %d, the text has %d", covered, lines)
	}
}

// TestSplitChunksNeverInsideFence: no chunk starts or ends inside a fenced code block.
func TestSplitChunksNeverInsideFence(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "Paragraph %d %s\n\n```go\n", i, strings.Repeat("text ", 30))
		for j := 0; j < 15; j++ {
			fmt.Fprintf(&b, "fmt.Println(%d, %d) // some code here\n", i, j)
		}
		b.WriteString("```\n\n")
	}
	lines := strings.SplitAfter(b.String(), "\n")
	inFence := make([]bool, len(lines)+2) // inFence[l]: line l (1-based) is inside a fence or its closing line
	open := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			if open {
				inFence[i+1] = true
			}
			open = !open
			continue
		}
		inFence[i+1] = open
	}
	for _, c := range splitChunks(b.String(), 100, 30) {
		if inFence[c.StartLine] {
			t.Errorf("a chunk starts inside a fence at line %d", c.StartLine)
		}
		if open := strings.Count(c.Text, "```"); open%2 != 0 {
			t.Errorf("chunk %d-%d holds an odd number of fence lines", c.StartLine, c.EndLine)
		}
	}
}

func FuzzSplitChunks(f *testing.F) {
	f.Add("# a\n\nb\n```\nc\n```\n", 10, 3)
	f.Fuzz(func(t *testing.T, s string, size, overlap int) {
		size = 1 + int(uint(size)%500)
		overlap = int(uint(overlap) % uint(size/2+1))
		prevStart := 0
		for _, c := range splitChunks(s, size, overlap) {
			if c.StartLine <= prevStart || c.EndLine < c.StartLine {
				t.Fatalf("bad chunk %d-%d after start %d", c.StartLine, c.EndLine, prevStart)
			}
			prevStart = c.StartLine
		}
	})
}
