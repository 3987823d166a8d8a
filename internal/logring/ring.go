// Package logring keeps the gateway's last log lines in memory for the Control UI's Logs
// page: a zerolog writer that parses each JSON line, redacts secrets, and keeps the newest
// Size lines (each cut to MaxLine bytes), so its memory is bounded whatever is logged.
// Followers get each new line as it is written; a slow follower misses lines rather than
// slowing the logger.
package logring

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/reefgw/reef/redact"
)

const (
	// Size is how many lines the ring keeps.
	Size = 500
	// MaxLine bounds one line's message and fields, in bytes.
	MaxLine = 1024
	// followBuffer is how many lines a follower may fall behind before it misses some.
	followBuffer = 64
)

// Line is one log line.
type Line struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Level   string    `json:"level"` // trace, debug, info, warn, error, fatal, panic
	Message string    `json:"message"`
	Fields  string    `json:"fields"` // the other fields, "key=value key=value", sorted by key
}

// Text is the line as one string, for searching.
func (l Line) Text() string { return l.Message + " " + l.Fields }

// Ring is a zerolog writer keeping the newest lines. The zero value is not usable: use New.
type Ring struct {
	mu     sync.Mutex
	lines  []Line // grows to Size, then is overwritten in place from next
	next   int
	seq    uint64
	red    *redact.Redactor
	follow map[chan Line]struct{}
}

// New returns an empty ring that redacts secrets from every line.
func New(secrets ...string) *Ring {
	return &Ring{red: redact.New(secrets...), follow: map[chan Line]struct{}{}}
}

// SetSecrets replaces the secrets the ring redacts (the gateway token is known only after
// the logger is built).
func (r *Ring) SetSecrets(secrets ...string) {
	red := redact.New(secrets...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.red = red
	for i := range r.lines { // a line written before the secret was known
		r.lines[i].Message, r.lines[i].Fields = red.String(r.lines[i].Message), red.String(r.lines[i].Fields)
	}
}

// Write takes one zerolog JSON line. It never fails: a line it cannot parse is kept as text.
func (r *Ring) Write(p []byte) (int, error) {
	l := parse(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	l.Message, l.Fields = cut(r.red.String(l.Message)), cut(r.red.String(l.Fields))
	r.seq++
	l.Seq = r.seq
	if len(r.lines) < Size {
		r.lines = append(r.lines, l)
	} else {
		r.lines[r.next] = l
		r.next = (r.next + 1) % Size
	}
	for ch := range r.follow {
		select {
		case ch <- l:
		default: // behind: it misses this line
		}
	}
	return len(p), nil
}

// parse reads a zerolog JSON line.
func parse(p []byte) Line {
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		return Line{Time: time.Now(), Level: "info", Message: strings.TrimSpace(string(p))}
	}
	l := Line{Time: time.Now(), Level: "info"}
	if s, ok := m["level"].(string); ok {
		l.Level = s
	}
	if s, ok := m["time"].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			l.Time = t
		}
	}
	if s, ok := m["message"].(string); ok {
		l.Message = s
	}
	delete(m, "level")
	delete(m, "time")
	delete(m, "message")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := m[k]
		if s, ok := v.(string); ok {
			fmt.Fprintf(&b, "%s=%s", k, s)
		} else {
			j, _ := json.Marshal(v)
			fmt.Fprintf(&b, "%s=%s", k, j)
		}
	}
	l.Fields = b.String()
	return l
}

func cut(s string) string {
	if len(s) <= MaxLine {
		return s
	}
	i := MaxLine
	for i > 0 && s[i]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		i--
	}
	return s[:i] + "…"
}

// levels orders the level names; a filter shows its level and the ones above.
var levels = map[string]int{"trace": 0, "debug": 1, "info": 2, "warn": 3, "error": 4, "fatal": 5, "panic": 6}

// Query selects lines.
type Query struct {
	Level string // the least level shown ("" = all)
	Text  string // a case-insensitive substring of the message or fields ("" = all)
	After uint64 // only lines with a greater Seq
	Limit int    // the newest Limit lines (0 = all kept)
}

// Match reports whether l is selected by q (Limit and After aside).
func (q Query) Match(l Line) bool {
	if min, ok := levels[q.Level]; ok && levels[l.Level] < min {
		return false
	}
	return q.Text == "" || strings.Contains(strings.ToLower(l.Text()), strings.ToLower(q.Text))
}

// Lines returns the kept lines q selects, oldest first.
func (r *Ring) Lines(q Query) []Line {
	r.mu.Lock()
	all := make([]Line, 0, len(r.lines))
	all = append(all, r.lines[r.next:]...)
	all = append(all, r.lines[:r.next]...)
	r.mu.Unlock()
	out := all[:0]
	for _, l := range all {
		if l.Seq > q.After && q.Match(l) {
			out = append(out, l)
		}
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[len(out)-q.Limit:]
	}
	return out
}

// Follow returns a channel of the lines written from now on, and a function that ends it.
func (r *Ring) Follow() (<-chan Line, func()) {
	ch := make(chan Line, followBuffer)
	r.mu.Lock()
	r.follow[ch] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			r.mu.Lock()
			delete(r.follow, ch)
			r.mu.Unlock()
		})
	}
}
