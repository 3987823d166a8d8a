package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Target is one model Failover may use.
type Target struct {
	Label    string // for errors, e.g. "openai/gpt-4.1-mini"
	Provider Provider
	Model    string // replaces Request.Model when set
}

// Failover tries targets in order, moving to the next when a call fails before its first
// event, except when ctx ended or the context window overflowed (the caller compacts and
// retries). Wrap each target's provider in Retry so that each model gets its retries first.
// The streams it returns report the answering target's label through AnsweredBy.
func Failover(targets ...Target) Provider {
	return &failover{targets: append([]Target(nil), targets...)}
}

type failover struct {
	targets []Target
}

func (f *failover) Stream(ctx context.Context, req Request) (Stream, error) {
	s := &failoverStream{f: f, ctx: ctx, req: req}
	if err := s.connect(); err != nil {
		return nil, err
	}
	return s, nil
}

// AnsweredBy returns the label of the target that answered on a stream returned by Failover,
// or "" for other streams.
func AnsweredBy(s Stream) string {
	if a, ok := s.(interface{ Answered() string }); ok {
		return a.Answered()
	}
	return ""
}

// failoverStream moves to the next target until one yields its first event.
type failoverStream struct {
	f       *failover
	ctx     context.Context
	req     Request
	next    int // index of the next target to try
	tried   []string
	cur     Stream
	err     error // sticky, once every target failed
	emitted bool
}

// final reports whether err must reach the caller without trying another target.
func (s *failoverStream) final(err error) bool {
	return s.ctx.Err() != nil || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrContextOverflow)
}

// connect opens a stream on the next target that accepts the call.
func (s *failoverStream) connect() error {
	var last error
	for s.next < len(s.f.targets) {
		t := s.f.targets[s.next]
		s.next++
		s.tried = append(s.tried, t.Label)
		req := s.req
		if t.Model != "" {
			req.Model = t.Model
		}
		st, err := t.Provider.Stream(s.ctx, req)
		if err == nil {
			s.cur = st
			return nil
		}
		last = err
		if s.final(err) {
			break
		}
	}
	return s.wrap(last)
}

func (s *failoverStream) wrap(err error) error {
	if err == nil {
		return errors.New("providers: failover: no targets")
	}
	return fmt.Errorf("providers: failover (tried %s): %w", strings.Join(s.tried, ", "), err)
}

// Answered returns the label of the target whose stream is being read.
func (s *failoverStream) Answered() string {
	if s.cur == nil || len(s.tried) == 0 {
		return ""
	}
	return s.tried[len(s.tried)-1]
}

func (s *failoverStream) Next() (Event, error) {
	for {
		if s.err != nil {
			return Event{}, s.err
		}
		ev, err := s.cur.Next()
		if err == nil {
			s.emitted = true
			return ev, nil
		}
		if s.emitted || err == io.EOF {
			return ev, err
		}
		s.cur.Close()
		s.cur = nil
		if s.final(err) || s.next >= len(s.f.targets) {
			s.err = s.wrap(err)
			continue
		}
		if err := s.connect(); err != nil {
			s.err = err
		}
	}
}

func (s *failoverStream) Close() error {
	if s.cur == nil {
		return nil
	}
	return s.cur.Close()
}
