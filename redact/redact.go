// Package redact replaces secret values (API keys, bot tokens) in text before it is stored, logged
// or sent: the value itself, a copy split by whitespace (a wrapped terminal line), a long-enough
// prefix (a truncated echo), and the encoded forms a command's output may hold them in (standard
// and URL-safe base64 at each of the three byte alignments, hex, URL encoding).
//
// A value shorter than MinLen is never searched for: a local server's key "x" or "none" would
// blank every such letter or word in a log line and make it unreadable, and such a value is no
// secret worth the damage.
package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"
)

const (
	// MinLen is the shortest value treated as a secret.
	MinLen = 8
	// PrefixLen is how many leading characters of a secret of at least PrefixMin characters are
	// redacted on their own (a truncated copy such as "sk-proj-abcd…").
	PrefixLen = 12
	PrefixMin = 16
	// maxGap is how many whitespace bytes may split a copy between two of its characters.
	maxGap = 4
	// Mark replaces what was redacted.
	Mark = "[redacted]"
)

// Redactor replaces secrets in text. The zero value and nil redact nothing. It is safe for
// concurrent use.
type Redactor struct {
	raw     []string          // secrets, longest first, matched loosely (gaps, prefixes)
	encoded *strings.Replacer // encoded forms, matched exactly
	encList []string          // the encoded forms, for Pending
	first   map[byte]bool     // first bytes of raw, for a quick skip
}

// New returns a redactor for the given secrets; values shorter than MinLen are ignored.
func New(secrets ...string) *Redactor {
	uniq := map[string]bool{}
	for _, s := range secrets {
		if len(s) >= MinLen {
			uniq[s] = true
		}
	}
	if len(uniq) == 0 {
		return nil
	}
	r := &Redactor{first: map[byte]bool{}}
	enc := map[string]bool{}
	for s := range uniq {
		r.raw = append(r.raw, s)
		r.first[s[0]] = true
		for _, e := range encodings(s) {
			if e != s && len(e) >= MinLen {
				enc[e] = true
			}
		}
	}
	sort.Slice(r.raw, func(i, j int) bool { // longest first, then stable order
		if len(r.raw[i]) != len(r.raw[j]) {
			return len(r.raw[i]) > len(r.raw[j])
		}
		return r.raw[i] < r.raw[j]
	})
	if len(enc) > 0 {
		list := make([]string, 0, len(enc))
		for e := range enc {
			list = append(list, e)
		}
		sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
		pairs := make([]string, 0, 2*len(list))
		for _, e := range list {
			pairs = append(pairs, e, Mark)
		}
		r.encoded = strings.NewReplacer(pairs...)
		r.encList = list
	}
	return r
}

// String returns s with every secret replaced by Mark.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.raw) == 0 {
		return s
	}
	s = r.loose(s)
	if r.encoded != nil {
		s = r.encoded.Replace(s)
	}
	return s
}

// loose replaces copies of the raw secrets, also split by whitespace or cut after PrefixLen
// characters.
func (r *Redactor) loose(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if !r.first[s[i]] {
			continue
		}
		end := i
		for _, sec := range r.raw {
			if e := match(s, i, sec); e > end {
				end = e
			}
		}
		if end == i {
			continue
		}
		if b.Len() == 0 && last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(Mark)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Pending is where the end of s may hold the beginning of a copy of a secret that text yet
// to come would complete (cut short, maybe followed by whitespace inside the copy): len(s)
// when it holds none. Text redacted in pieces as it streams is cut there: what comes before
// is redacted and sent, the rest waits for more text, so no copy runs across two pieces and
// the pieces are redacted as the whole text would be.
func (r *Redactor) Pending(s string) int {
	if r == nil || len(r.raw) == 0 {
		return len(s)
	}
	cut := len(s)
scan:
	for i := 0; i < len(s); i++ { // the scan of loose: a copy found is skipped whole
		if !r.first[s[i]] {
			continue
		}
		end := i
		for _, sec := range r.raw {
			e, open := matchOpen(s, i, sec)
			if open {
				cut = i
				break scan
			}
			end = max(end, e)
		}
		if end > i {
			i = end - 1
		}
	}
	for _, e := range r.encList { // an encoded copy is matched exactly: only its start can end s
		for k := min(len(e)-1, len(s)); k > 0 && len(s)-k < cut; k-- {
			if strings.HasSuffix(s, e[:k]) {
				cut = len(s) - k
			}
		}
	}
	return cut
}

// matchOpen is match, and whether the copy it follows reaches the end of s unfinished: s
// ends in it, or in at most maxGap whitespace bytes after it.
func matchOpen(s string, i int, sec string) (int, bool) {
	j, k := i, 0
	for k < len(sec) {
		if k > 0 {
			g := j
			for g < len(s) && g-j < maxGap && isSpace(s[g]) {
				g++
			}
			if g == len(s) {
				return i, true
			}
			if s[g] == sec[k] {
				j = g
			}
		}
		if j >= len(s) {
			return i, true
		}
		if s[j] != sec[k] {
			break
		}
		j++
		k++
	}
	return match(s, i, sec), false
}

// match returns the end of a copy of sec starting at s[i] (its characters in order, at most maxGap
// whitespace bytes between two of them), or of a copy of at least PrefixLen of its leading
// characters when sec is at least PrefixMin long; i when neither starts there.
func match(s string, i int, sec string) int {
	j, k := i, 0
	end := i
	for k < len(sec) {
		if k > 0 {
			g := j
			for g < len(s) && g-j < maxGap && isSpace(s[g]) {
				g++
			}
			if g < len(s) && s[g] == sec[k] {
				j = g
			}
		}
		if j >= len(s) || s[j] != sec[k] {
			break
		}
		j++
		k++
		end = j
	}
	switch {
	case k == len(sec):
		return end
	case len(sec) >= PrefixMin && k >= PrefixLen:
		return end
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// encodings returns the forms of s that may appear in text instead of s: hex in both cases, URL
// encodings, and the characters of standard and URL-safe base64 that depend on s alone when s
// starts at each of the three byte offsets of a base64 group.
func encodings(s string) []string {
	out := []string{hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))),
		url.QueryEscape(s), url.PathEscape(s)}
	for _, e := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			out = append(out, base64Core(e, s, k))
		}
	}
	return out
}

// base64Core encodes s placed after k other bytes and keeps the characters whose six bits all
// come from s: what any text holding s at that alignment encodes to, whatever surrounds it.
func base64Core(e *base64.Encoding, s string, k int) string {
	buf := make([]byte, k+len(s))
	copy(buf[k:], s)
	enc := e.EncodeToString(buf)
	lo := (8*k + 5) / 6          // first character starting at or after bit 8k
	hi := (8 * (k + len(s))) / 6 // characters ending at or before the last bit of s
	if hi > len(enc) {
		hi = len(enc)
	}
	if lo >= hi {
		return ""
	}
	return enc[lo:hi]
}
