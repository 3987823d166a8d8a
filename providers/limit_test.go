package providers_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

// TestLimitReleasesExactlyOnce holds one slot outside the stream under test: a double release
// would free it too (InUse 0), a missing one would leave 2.
func TestLimitReleasesExactlyOnce(t *testing.T) {
	tests := []struct {
		name string
		run  func(p providers.Provider) error
	}{
		{"EOF then Close twice", func(p providers.Provider) error {
			s, err := p.Stream(context.Background(), providers.Request{})
			if err != nil {
				return err
			}
			if _, err := drain(s); err != nil {
				return err
			}
			s.Next()
			s.Close()
			return s.Close()
		}},
		{"Close before the end", func(p providers.Provider) error {
			s, err := p.Stream(context.Background(), providers.Request{})
			if err != nil {
				return err
			}
			s.Next()
			s.Close()
			s.Next()
			return s.Close()
		}},
		{"error from Stream", func(p providers.Provider) error {
			_, err := p.Stream(context.Background(), providers.Request{Model: "fail"})
			if !errors.Is(err, providers.ErrServer) {
				return errors.New("want ErrServer")
			}
			return nil
		}},
		{"error mid-stream", func(p providers.Provider) error {
			s, err := p.Stream(context.Background(), providers.Request{Model: "cut"})
			if err != nil {
				return err
			}
			if _, err := drain(s); !errors.Is(err, providers.ErrStreamCut) {
				return errors.New("want ErrStreamCut")
			}
			return s.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := fake.NewScript()
			script.Respond = func(r fake.Request) fake.Reply {
				switch r.Model {
				case "fail":
					return fake.Reply{Status: 500}
				case "cut":
					return fake.Reply{Text: "some text", CutInText: true}
				}
				return fake.Reply{Text: "a full answer"}
			}
			sem := providers.NewSemaphore(2)
			if err := sem.Acquire(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := tt.run(providers.Limit(fake.New(script), sem)); err != nil {
				t.Fatal(err)
			}
			if got := sem.InUse(); got != 1 {
				t.Errorf("InUse = %d after the call, want 1 (the outside holder)", got)
			}
		})
	}
}

func TestLimitWaitsForASlot(t *testing.T) {
	sem := providers.NewSemaphore(1)
	p := providers.Limit(fake.New(fake.NewScript()), sem)
	held, err := p.Stream(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Stream(ctx, providers.Request{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second call with the slot taken: err = %v, want DeadlineExceeded", err)
	}
	held.Close()
	s, err := p.Stream(context.Background(), providers.Request{})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	s.Close()
}

func TestLimitBoundsConcurrency(t *testing.T) {
	const limit, callers = 3, 20
	sem := providers.NewSemaphore(limit)
	var active, peak atomic.Int32
	inner := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){
		func(providers.Request) (providers.Stream, error) { return textDeltas("x"), nil },
	}}
	counting := providerFunc(func(ctx context.Context, req providers.Request) (providers.Stream, error) {
		n := active.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		s, err := inner.Stream(ctx, req)
		return &onClose{Stream: s, fn: func() { active.Add(-1) }}, err
	})
	p := providers.Limit(counting, sem)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			s, err := p.Stream(context.Background(), providers.Request{})
			if err != nil {
				t.Error(err)
				return
			}
			s.Next()
			s.Close()
		})
	}
	wg.Wait()
	if got := peak.Load(); got < 1 || got > limit {
		t.Errorf("peak concurrency %d, want 1..%d", got, limit)
	}
	if sem.InUse() != 0 {
		t.Errorf("InUse = %d after all calls, want 0", sem.InUse())
	}
}

func TestSemaphoreOverReleasePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("releasing a free semaphore did not panic")
		}
	}()
	providers.NewSemaphore(1).Release()
}

type providerFunc func(ctx context.Context, req providers.Request) (providers.Stream, error)

func (f providerFunc) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	return f(ctx, req)
}

type onClose struct {
	providers.Stream
	fn func()
}

func (s *onClose) Close() error {
	s.fn()
	return s.Stream.Close()
}
