package providers

import (
	"context"
	"fmt"
	"sync"
)

// Semaphore bounds how many LLM calls run at once, across every provider sharing it.
type Semaphore struct {
	slots chan struct{}
}

// NewSemaphore returns a semaphore with n slots (at least 1).
func NewSemaphore(n int) *Semaphore {
	return &Semaphore{slots: make(chan struct{}, max(n, 1))}
}

// Acquire takes a slot, waiting until one is free or ctx ends.
func (s *Semaphore) Acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release frees a slot. Releasing more than was acquired panics: it is a bug.
func (s *Semaphore) Release() {
	select {
	case <-s.slots:
	default:
		panic("providers: semaphore released more often than acquired")
	}
}

// InUse returns how many slots are taken.
func (s *Semaphore) InUse() int { return len(s.slots) }

// Cap returns the number of slots.
func (s *Semaphore) Cap() int { return cap(s.slots) }

// Limit makes every call of p hold a slot of sem from before Stream until the stream ends
// (io.EOF, an error, or Close), whichever comes first.
func Limit(p Provider, sem *Semaphore) Provider {
	return &limited{p: p, sem: sem}
}

type limited struct {
	p   Provider
	sem *Semaphore
}

func (l *limited) Stream(ctx context.Context, req Request) (Stream, error) {
	if err := l.sem.Acquire(ctx); err != nil {
		return nil, fmt.Errorf("providers: waiting for a call slot: %w", err)
	}
	s, err := l.p.Stream(ctx, req)
	if err != nil {
		l.sem.Release()
		return nil, err
	}
	return &limitedStream{Stream: s, sem: l.sem}, nil
}

// limitedStream releases its slot exactly once, at the end of the stream.
type limitedStream struct {
	Stream
	sem  *Semaphore
	once sync.Once
}

func (s *limitedStream) release() { s.once.Do(s.sem.Release) }

func (s *limitedStream) Next() (Event, error) {
	ev, err := s.Stream.Next()
	if err != nil {
		s.release()
	}
	return ev, err
}

func (s *limitedStream) Close() error {
	err := s.Stream.Close()
	s.release()
	return err
}

// Answered passes AnsweredBy through the wrapper.
func (s *limitedStream) Answered() string { return AnsweredBy(s.Stream) }
