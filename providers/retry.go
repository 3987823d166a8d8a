package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/reefgw/reef/messages"
)

// RetryConfig tunes Retry. Zero fields take the defaults.
type RetryConfig struct {
	MaxRetries    int           // retries after the first attempt; default 3, negative for none
	BaseDelay     time.Duration // first backoff ceiling; default 500ms
	MaxDelay      time.Duration // backoff cap; default 8s
	MaxRetryAfter time.Duration // a longer Retry-After gives up at once; default 30s
	// Sleep waits d or until ctx ends (returning ctx.Err()). Tests inject it; default a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (c RetryConfig) withDefaults() RetryConfig {
	if c.MaxRetries == 0 {
		c.MaxRetries = 3
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.BaseDelay <= 0 {
		c.BaseDelay = 500 * time.Millisecond
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = 8 * time.Second
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = 30 * time.Second
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	return c
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retry retries p's calls that fail with a retryable error (rate limit, overload, server error,
// transport failure) with capped exponential backoff and full jitter, honouring Retry-After. A
// stream that fails before its first event is re-issued transparently; once an event was
// emitted, errors pass through. A Retry-After beyond MaxRetryAfter gives up at once so that
// Failover can move on.
func Retry(p Provider, cfg RetryConfig) Provider {
	return &retrier{p: p, cfg: cfg.withDefaults()}
}

type retrier struct {
	p   Provider
	cfg RetryConfig
}

func (r *retrier) Stream(ctx context.Context, req Request) (Stream, error) {
	s := &retryStream{r: r, ctx: ctx, req: req}
	if err := s.connect(); err != nil {
		return nil, err
	}
	return s, nil
}

// retryable reports whether err is worth another attempt on the same model.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrAuth) || errors.Is(err, ErrBadRequest) || errors.Is(err, ErrContextOverflow) {
		return false
	}
	return Retryable(err) || transient(err)
}

// transient reports transport failures: dropped or refused connections, network timeouts.
func transient(err error) bool {
	var opErr *net.OpError
	var netErr net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &opErr) || (errors.As(err, &netErr) && netErr.Timeout())
}

// delay returns the wait before retry number attempt (0-based), or false to give up.
func (r *retrier) delay(attempt int, err error) (time.Duration, bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		if apiErr.RetryAfter > r.cfg.MaxRetryAfter {
			return 0, false
		}
		return apiErr.RetryAfter, true
	}
	ceil := r.cfg.BaseDelay << min(attempt, 30)
	if ceil <= 0 || ceil > r.cfg.MaxDelay {
		ceil = r.cfg.MaxDelay
	}
	return rand.N(ceil + 1), true
}

// retryStream re-issues the call until a stream yields its first event.
type retryStream struct {
	r       *retrier
	ctx     context.Context
	req     Request
	cur     Stream
	err     error // sticky, once retries are exhausted
	attempt int
	told    time.Duration // waited as Retry-After asked, in all
	emitted bool
	noImage bool // the request was sent again without its images
}

// connect opens a stream, waiting and retrying while the errors allow.
func (s *retryStream) connect() error {
	for {
		st, err := s.r.p.Stream(s.ctx, s.req)
		if err == nil {
			s.cur = st
			return nil
		}
		if err := s.backoff(err); err != nil {
			return err
		}
	}
}

// backoff waits before the next attempt, or returns the error to give up with.
// A wait the endpoint asked for with Retry-After (a rate limit, not a failure) does not count
// against MaxRetries while such waits stay within MaxRetryAfter in all: behind the adaptive
// limit, a call can meet several 429s in a row while the limit comes down to what the
// endpoint takes, and should not fail its user for it.
func (s *retryStream) backoff(err error) error {
	if !s.noImage && refusedImage(err) && hasImages(s.req) {
		s.req, s.noImage = withoutImages(s.req, err), true
		return nil // at once, and once
	}
	if !retryable(s.ctx, err) {
		return err
	}
	var apiErr *APIError
	told := errors.As(err, &apiErr) && apiErr.RetryAfter > 0 && s.told+apiErr.RetryAfter <= s.r.cfg.MaxRetryAfter
	if !told && s.attempt >= s.r.cfg.MaxRetries {
		return err
	}
	d, ok := s.r.delay(s.attempt, err)
	if !ok {
		return err
	}
	if told {
		s.told += d
	} else {
		s.attempt++
	}
	if serr := s.r.cfg.Sleep(s.ctx, d); serr != nil {
		return fmt.Errorf("providers: retry: %w (last error: %v)", serr, err)
	}
	return nil
}

func (s *retryStream) Next() (Event, error) {
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
		if err := s.backoff(err); err != nil {
			s.err = err
			continue
		}
		if err := s.connect(); err != nil {
			s.err = err
		}
	}
}

func (s *retryStream) Close() error {
	if s.cur == nil {
		return nil
	}
	return s.cur.Close()
}

// Answered passes AnsweredBy through the wrapper.
func (s *retryStream) Answered() string {
	if s.cur == nil {
		return ""
	}
	return AnsweredBy(s.cur)
}

// refusedImage reports whether err is a provider refusing a request because of an image:
// a 400 whose message names an image or a media type.
func refusedImage(err error) bool {
	var apiErr *APIError
	if !errors.Is(err, ErrBadRequest) || errors.Is(err, ErrContextOverflow) || !errors.As(err, &apiErr) {
		return false
	}
	m := strings.ToLower(apiErr.Message)
	return strings.Contains(m, "image") || strings.Contains(m, "mime") || strings.Contains(m, "media")
}

func hasImages(req Request) bool {
	for _, m := range req.Messages {
		for _, md := range m.Media {
			if len(md.Data) > 0 {
				return true
			}
		}
	}
	return false
}

// withoutImages is req with no image bytes (each image stays a path in its message's text)
// and a note that tells the model why: a provider that refuses an image would otherwise
// refuse every later request of the conversation, which sends its latest images again.
func withoutImages(req Request, err error) Request {
	msgs := make([]messages.ChatMessage, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.Media) > 0 {
			media := append([]messages.Media(nil), m.Media...)
			for j := range media {
				media[j].Data = nil
			}
			m.Media = media
		}
		msgs[i] = m
	}
	req.Messages = msgs
	var apiErr *APIError
	errors.As(err, &apiErr)
	why := apiErr.Message
	if r := []rune(why); len(r) > 200 {
		why = string(r[:200]) + "…"
	}
	req.SystemTail += "\n\n[reef: the images of this conversation were not sent to you: the model provider refused them (" +
		why + "). You see only their paths; say so if an image matters to your answer.]"
	return req
}
