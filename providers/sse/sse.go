// Package sse reads Server-Sent Events streams (the framing every LLM provider streams in),
// with an idle watchdog: a stream that sends no event for the idle timeout is cut. Keep-alives
// are not progress: comment lines (": keepalive") and the events a client marks as keep-alives
// (Anthropic's ping) do not reset the watchdog, so a server that sends only those is cut too.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"time"
)

// Event is one SSE event. Name is empty for unnamed events ("message").
type Event struct {
	Name string
	Data string
}

// ErrIdle is returned by Next when the stream was silent for longer than the idle timeout.
var ErrIdle = errors.New("sse: stream idle")

// ErrTooLarge is returned by Next for a line, or an event's data over all its lines, longer
// than 8 MiB: reading stops there.
var ErrTooLarge = errors.New("sse: event too large")

// maxLine bounds one SSE line (a large tool-call argument chunk fits comfortably).
const maxLine = 8 << 20

// Reader reads events from a response body.
type Reader struct {
	sc    *bufio.Scanner
	body  io.Closer
	timer *time.Timer
	idle  time.Duration

	mu    sync.Mutex
	fired bool

	// Keepalive, when set, reports events that are only keep-alives: Next skips them without
	// resetting the watchdog. Set it before the first Next.
	Keepalive func(Event) bool
}

// NewReader reads events from body. With idle > 0, a silence longer than idle closes body and
// makes Next return ErrIdle. Close stops the watchdog and closes body.
func NewReader(body io.ReadCloser, idle time.Duration) *Reader {
	r := &Reader{body: body, idle: idle}
	r.sc = bufio.NewScanner(body)
	// Start small: the scanner grows the buffer for a longer line (up to maxLine). A large
	// start buffer was a large share of the gateway's allocations under load (BENCHMARKS.md).
	r.sc.Buffer(make([]byte, 0, 4<<10), maxLine)
	if idle > 0 {
		r.timer = time.AfterFunc(idle, func() {
			r.mu.Lock()
			r.fired = true
			r.mu.Unlock()
			body.Close()
		})
	}
	return r
}

// Next returns the next event, io.EOF at a clean end of stream, ErrIdle after a silence, or
// io.ErrUnexpectedEOF / the transport error when the connection dropped mid-event.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	hasData := false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if hasData || ev.Name != "" {
				ev.Data = data.String()
				if r.Keepalive != nil && r.Keepalive(ev) {
					ev, hasData = Event{}, false
					data.Reset()
					continue
				}
				r.touch()
				return ev, nil
			}
			continue
		}
		if line[0] == ':' { // comment / keep-alive: not progress
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > maxLine {
				return Event{}, ErrTooLarge
			}
			data.Write(value)
			hasData = true
		}
	}
	if r.idleFired() {
		return Event{}, ErrIdle
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrTooLarge
		}
		return Event{}, err
	}
	if hasData { // final event without a trailing blank line
		ev.Data = data.String()
		r.touch()
		return ev, nil
	}
	return Event{}, io.EOF
}

// Close stops the watchdog and closes the body.
func (r *Reader) Close() error {
	if r.timer != nil {
		r.timer.Stop()
	}
	return r.body.Close()
}

func (r *Reader) touch() {
	if r.timer != nil {
		r.timer.Reset(r.idle)
	}
}

func (r *Reader) idleFired() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fired
}
