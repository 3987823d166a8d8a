package doccheck

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Link is one link found in a Markdown file.
type Link struct {
	Line   int    // 1-based line of the link
	Target string // as written, without angle brackets or title
}

// Path returns the link's target without its #fragment (and query); Fragment the part after
// '#', or "".
func (l Link) Path() string {
	p, _, _ := strings.Cut(l.Target, "#")
	p, _, _ = strings.Cut(p, "?")
	return p
}

// Fragment returns the part of the target after '#', or "" when there is none.
func (l Link) Fragment() string {
	_, f, _ := strings.Cut(l.Target, "#")
	return f
}

// External reports whether the link leaves the repository: it has a URL scheme (https:,
// mailto:...) or starts with "//".
func (l Link) External() bool {
	return strings.HasPrefix(l.Target, "//") || schemeRE.MatchString(l.Target)
}

var (
	schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	// inlineRE matches the opening of an inline link or image target: "](".
	inlineRE = regexp.MustCompile(`\]\(`)
	// refDefRE matches a reference definition: "[name]: target".
	refDefRE = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	// headingRE matches an ATX heading: "## Title".
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	// htmlAnchorRE matches an explicit anchor: <a name="x"> or id="x".
	htmlAnchorRE = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:id|name)="([^"]+)"`)
	// inlineLinkRE turns "[text](url)" into "text" in headings.
	inlineLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// Links returns the links of a Markdown document: inline links and images ([t](x), ![a](x))
// and reference definitions ([r]: x). Fenced code blocks and code spans are skipped.
func Links(md string) []Link {
	var links []Link
	for i, line := range proseLines(md) {
		if line == "" {
			continue
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			links = append(links, Link{Line: i + 1, Target: strings.Trim(m[1], "<>")})
			continue
		}
		for _, loc := range inlineRE.FindAllStringIndex(line, -1) {
			if t, ok := target(line[loc[1]:]); ok {
				links = append(links, Link{Line: i + 1, Target: t})
			}
		}
	}
	return links
}

// target reads a link destination at the start of s (just after "](") up to its closing
// parenthesis, dropping a title and angle brackets.
func target(s string) (string, bool) {
	s = strings.TrimLeft(s, " ")
	if strings.HasPrefix(s, "<") {
		end := strings.Index(s, ">")
		if end < 0 {
			return "", false
		}
		return s[1:end], true
	}
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case r == ')' || r == ' ':
			return s[:i], i > 0
		}
	}
	return "", false
}

// proseLines returns md's lines with fenced code blocks blanked and code spans removed, so
// that links and headings are only looked for in prose. Line numbers are kept.
func proseLines(md string) []string {
	lines := strings.Split(md, "\n")
	var fence string
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			lines[i] = ""
			continue
		}
		lines[i] = stripCodeSpans(line)
	}
	return lines
}

// stripCodeSpans removes `code spans` from a line: a run of n backticks opens one and the
// next run of exactly n closes it. A run without a closer is kept as text.
func stripCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := backticks(line[i:])
		closer := -1
		for j := i + n; j < len(line); {
			if line[j] != '`' {
				j++
				continue
			}
			m := backticks(line[j:])
			if m == n {
				closer = j
				break
			}
			j += m
		}
		if closer < 0 {
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = closer + n
	}
	return b.String()
}

// backticks returns how many backticks s starts with.
func backticks(s string) int {
	return len(s) - len(strings.TrimLeft(s, "`"))
}

// Anchors returns the fragments that link into md: the GitHub slug of every ATX heading
// (repeats get -1, -2...) and explicit HTML id/name anchors.
func Anchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	lines := strings.Split(md, "\n")
	var fence string
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[2])
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// Slug returns the anchor GitHub gives a heading's text: inline markup dropped (links keep
// their text), lower-cased, every character but letters, digits, marks, '_', '-' and spaces
// removed, and each space turned into '-'.
func Slug(heading string) string {
	heading = inlineLinkRE.ReplaceAllString(heading, "$1")
	heading = strings.NewReplacer("`", "", "*", "").Replace(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
