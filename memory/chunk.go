package memory

import (
	"strings"
)

// Chunk is a run of whole lines of one file.
type Chunk struct {
	StartLine, EndLine int // 1-based, inclusive
	Text               string
}

// splitChunks cuts a Markdown text into chunks of about size tokens, each next one starting
// with about overlap tokens of the previous one's end. Chunks end at line ends, preferably
// before a heading or after a blank line, and never inside a fenced code block (a fence
// longer than size becomes a chunk of its own).
func splitChunks(text string, size, overlap int) []Chunk {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := len(lines)
	tokens := make([]int, n)
	canBreak := make([]bool, n+1) // a chunk may start before line i
	good := make([]bool, n+1)     // a good place: a heading or after a blank line
	inFence, fence := false, ""
	for i, l := range lines {
		tokens[i] = estimateTokens(l)
		trimmed := strings.TrimSpace(l)
		canBreak[i] = !inFence
		if !inFence {
			good[i] = strings.HasPrefix(trimmed, "#") || i > 0 && strings.TrimSpace(lines[i-1]) == ""
		}
		if f := fenceOf(trimmed); f != "" {
			switch {
			case !inFence:
				inFence, fence = true, f
			case strings.HasPrefix(trimmed, fence) && strings.TrimLeft(trimmed, fence[:1]) == "":
				inFence = false
			}
		}
	}
	canBreak[n], good[n] = true, true

	var out []Chunk
	start := 0
	for start < n {
		end, sum := start, 0
		lastGood := -1
		for end < n {
			if end > start && canBreak[end] && sum+tokens[end] > size {
				break
			}
			sum += tokens[end]
			end++
			if end < n && good[end] && canBreak[end] {
				lastGood = end
			}
		}
		// Prefer a heading or paragraph boundary in the chunk's second half.
		if end < n && lastGood > start && lastGood < end && tokensIn(tokens, start, lastGood) >= size/2 {
			end = lastGood
		}
		for end < n && !canBreak[end] { // a fence that started inside runs to its end
			end++
		}
		out = append(out, Chunk{StartLine: start + 1, EndLine: end, Text: strings.Join(lines[start:end], "")})
		if end >= n {
			break
		}
		next := end
		for j := end - 1; j > start; j-- {
			if tokensIn(tokens, j, end) > overlap {
				break
			}
			if canBreak[j] {
				next = j
			}
		}
		start = next
	}
	return out
}

func tokensIn(tokens []int, from, to int) int {
	s := 0
	for _, t := range tokens[from:to] {
		s += t
	}
	return s
}

// fenceOf returns the fence marker a line opens or closes with (``` or ~~~, any length), or "".
func fenceOf(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(trimmed, c+c+c) {
			k := 0
			for k < len(trimmed) && trimmed[k] == c[0] {
				k++
			}
			return trimmed[:k]
		}
	}
	return ""
}
