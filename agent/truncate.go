package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Tool-result caps in characters (runes) by context window, before the 30% rule.
const (
	toolCapSmall  = 16_000 // windows under 64k tokens (and unknown windows)
	toolCapMedium = 32_000 // windows under 200k tokens
	toolCapLarge  = 64_000
	// tailWindow is how far from the end tailMatters looks for signs of an important tail.
	tailWindow = 2_000
)

// tailKeywords in the last tailWindow characters of a result mean its end carries the outcome
// (an error, a test summary, an exit code), so truncation keeps the tail too.
var tailKeywords = []string{"error", "exception", "traceback", "failed", "panic", "summary", "total", "exit code"}

// ToolResultCap returns how many characters a tool result may keep for a model with a context
// window of window tokens: 16,000 under 64k tokens, 32,000 under 200k, 64,000 above, and never
// more than 30% of the window (at 4 characters per token). window <= 0 (unknown) gets 16,000.
func ToolResultCap(window int) int {
	c := toolCapLarge
	switch {
	case window < 64_000:
		c = toolCapSmall
	case window < 200_000:
		c = toolCapMedium
	}
	if window > 0 {
		c = min(c, window*4*3/10)
	}
	return c
}

// TruncateToolResult caps a tool result at ToolResultCap(window) characters, notice included.
// Over the cap it keeps the head; when the tail looks important (see tailKeywords) it keeps the
// head and the tail. A notice in between says how much was cut and how to get the rest. Cuts
// snap to a nearby line break and never split a rune; invalid UTF-8 is replaced.
func TruncateToolResult(text string, window int) string {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	limit := ToolResultCap(window)
	if len(text) <= limit {
		return text // bytes >= runes
	}
	n := utf8.RuneCountInString(text)
	if n <= limit {
		return text
	}
	keepTail := tailMatters(text, n)
	// The notice is sized for the largest count it can show, so the result never exceeds limit.
	budget := limit - utf8.RuneCountInString(truncNotice(n, n, keepTail))
	if budget < 1 {
		return runePrefix(text, limit) // a window too small for a notice
	}
	head, tail := budget, 0
	if keepTail {
		tail = budget * 3 / 10
		head = budget - tail
	}
	headText := runePrefix(text, head)
	if k := strings.LastIndexByte(headText, '\n'); k >= 0 && utf8.RuneCountInString(headText[k+1:]) < head/5 {
		headText = headText[:k+1]
	}
	tailText := runeSuffix(text, n, tail)
	if k := strings.IndexByte(tailText, '\n'); k >= 0 && utf8.RuneCountInString(tailText[:k]) < tail/5 {
		tailText = tailText[k+1:]
	}
	omitted := n - utf8.RuneCountInString(headText) - utf8.RuneCountInString(tailText)
	return headText + truncNotice(omitted, n, keepTail) + tailText
}

// truncNotice tells the model what was cut and how to see it.
func truncNotice(omitted, total int, middle bool) string {
	where := "the rest"
	if middle {
		where = "the middle"
	}
	return fmt.Sprintf("\n\n[… %d of %d characters cut (%s): the result was too long for the context. "+
		"Use a narrower command or a filter, or read with an offset and limit, to see what was cut.]\n\n", omitted, total, where)
}

// tailMatters reports whether the last tailWindow characters of text (n runes) mention an
// outcome worth keeping.
func tailMatters(text string, n int) bool {
	tail := strings.ToLower(runeSuffix(text, n, tailWindow))
	for _, k := range tailKeywords {
		if strings.Contains(tail, k) {
			return true
		}
	}
	return false
}
