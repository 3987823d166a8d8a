// Package reqbody builds model request bodies from parts that every request of an agent
// shares: the stable prefix of the system prompt and the tools are encoded once and their
// bytes shared, not copied, by the bodies of all requests. A request waiting for its answer
// then holds only what is its own (net/http keeps a request's body until the response ends,
// to send it again on a dead kept-alive connection), and a burst of requests does not escape
// the same prompt once per request.
package reqbody

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
)

// Body is an encoded request in segments, some of them shared with other bodies. Segments
// are never written to.
type Body [][]byte

// Len is the body's length in bytes.
func (b Body) Len() int64 {
	n := 0
	for _, seg := range b {
		n += len(seg)
	}
	return int64(n)
}

// Reader returns a fresh reader over the whole body.
func (b Body) Reader() io.Reader { return &reader{segs: b} }

// reader reads a body's segments in turn. Its WriteTo hands each segment to the writer as it
// is, with no copy buffer (io.Copy prefers it); net/http, though, copies a body of known
// length through an io.LimitReader, which hides WriteTo, so Read matters as much.
type reader struct {
	segs [][]byte
	off  int // into segs[0]
}

// Read fills p from as many segments as fit: net/http copies a body of known length through
// a buffer, one write to the connection per Read, and each write is a TCP segment of its own.
func (r *reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.segs) > 0 {
		c := copy(p[n:], r.segs[0][r.off:])
		n += c
		if r.off += c; r.off == len(r.segs[0]) {
			r.segs, r.off = r.segs[1:], 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for ; len(r.segs) > 0; r.segs, r.off = r.segs[1:], 0 {
		n, err := w.Write(r.segs[0][r.off:])
		total += int64(n)
		if err != nil {
			r.off += n
			return total, err
		}
	}
	return total, nil
}

// NewRequest returns an HTTP request carrying body (none when nil), with its length and a
// GetBody that reads it again, for net/http to send it once more on a dead kept-alive
// connection.
func NewRequest(ctx context.Context, method, url string, body Body) (*http.Request, error) {
	if body == nil {
		return http.NewRequestWithContext(ctx, method, url, nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body.Reader())
	if err != nil {
		return nil, err
	}
	req.ContentLength = body.Len()
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.Reader()), nil }
	return req, nil
}

// StableCut returns where the stable prefix of system ends: at most len(system), never inside
// a rune (each side is escaped on its own).
func StableCut(system string, stable int) int {
	stable = min(stable, len(system))
	for stable > 0 && stable < len(system) && !utf8.RuneStart(system[stable]) {
		stable++
	}
	return max(stable, 0)
}

// Prefixes keeps the escaped stable prefixes of system prompts: one per agent and kind of
// chat, so a handful. Its zero value is ready to use; it is safe for concurrent use.
type Prefixes struct {
	mu sync.Mutex
	m  map[string][]byte
}

const maxPrefixes = 16

// Escaped returns prefix as the inside of a JSON string (no quotes), as json.Marshal escapes it.
func (pc *Prefixes) Escaped(prefix string) ([]byte, error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if b, ok := pc.m[prefix]; ok {
		return b, nil
	}
	q, err := json.Marshal(prefix)
	if err != nil {
		return nil, err
	}
	if pc.m == nil || len(pc.m) >= maxPrefixes {
		pc.m = map[string][]byte{}
	}
	b := q[1 : len(q)-1 : len(q)-1]
	pc.m[prefix] = b
	return b, nil
}

// Tools keeps the encoded tools of the last request. Every request of an agent carries the
// same tool specs (the same slice), and encoding them (descriptions, JSON schemas compacted
// again) was the largest part of encoding a request. The cache is keyed by the slice, so it
// relies on what every caller does: a specs slice is never changed once used. Its zero value
// is ready to use; it is safe for concurrent use.
type Tools struct {
	mu   sync.Mutex
	key  *messages.ToolSpec // &specs[0]
	n    int
	json []byte
}

// Encoded returns encode(specs), encoded again only for another slice than last time; nil
// for no specs.
func (tc *Tools) Encoded(specs []messages.ToolSpec, encode func([]messages.ToolSpec) ([]byte, error)) ([]byte, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.key == &specs[0] && tc.n == len(specs) {
		return tc.json, nil
	}
	b, err := encode(specs)
	if err != nil {
		return nil, err
	}
	tc.key, tc.n, tc.json = &specs[0], len(specs), b
	return b, nil
}

// Encode encodes w as json.Marshal would (into a buffer of size bytes, a guess), then puts
// insert after the first occurrence of after and tools at the end (Splice).
func Encode(w any, size int, after, insert, tools []byte) (Body, error) {
	var buf bytes.Buffer
	buf.Grow(size)
	if err := json.NewEncoder(&buf).Encode(w); err != nil {
		return nil, err
	}
	b, ok := Splice(bytes.TrimRight(buf.Bytes(), "\n"), after, insert, tools)
	if !ok {
		return nil, errors.New("encode: no place for the system prompt in the request")
	}
	return b, nil
}

// Splice returns encoded with insert put in right after the first occurrence of after, and
// with tools, when there are any, added as the last member "tools" of the JSON object encoded
// is; insert and tools stay segments of their own. ok is false when encoded lacks after.
// encoded must be the caller's own: Splice may append into its spare capacity.
func Splice(encoded, after, insert, tools []byte) (b Body, ok bool) {
	rest := encoded
	if after != nil {
		i := bytes.Index(rest, after)
		if i < 0 {
			return nil, false
		}
		i += len(after)
		b = append(b, rest[:i:i], insert)
		rest = rest[i:]
	}
	if len(tools) == 0 {
		return append(b, rest), true
	}
	// rest ends with the object's '}': add the tools as its last member.
	rest = append(rest[:len(rest)-1], `,"tools":`...)
	return append(b, rest, tools, closeBrace), true
}

var closeBrace = []byte("}")
