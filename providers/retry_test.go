package providers_test

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

func TestRetry(t *testing.T) {
	ok := fake.Reply{Text: "done"}
	tests := []struct {
		name       string
		replies    []fake.Reply
		wantErr    error // nil: the answer is "done"
		wantSleeps []time.Duration
		wantCalls  int
	}{
		{"429 honours Retry-After", []fake.Reply{{Status: 429, RetryAfter: 2 * time.Second}, ok},
			nil, []time.Duration{2 * time.Second}, 2},
		{"Retry-After beyond the cap gives up at once", []fake.Reply{{Status: 429, RetryAfter: time.Minute}, ok},
			providers.ErrRateLimited, nil, 1},
		{"529 retried", []fake.Reply{{Status: 529}, ok}, nil, nil, 2},
		{"exhausted", []fake.Reply{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}, ok},
			providers.ErrServer, nil, 4},
		{"cut before the first event is re-issued", []fake.Reply{{CutInText: true}, ok}, nil, nil, 2},
		{"cut after events passes through", []fake.Reply{{Text: "partial answer", CutInText: true}, ok},
			providers.ErrStreamCut, nil, 1},
		{"401 not retried", []fake.Reply{{Status: 401}, ok}, providers.ErrAuth, nil, 1},
		{"400 not retried", []fake.Reply{{Status: 400}, ok}, providers.ErrBadRequest, nil, 1},
		{"overflow not retried", []fake.Reply{{Overflow: true}, ok}, providers.ErrContextOverflow, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := fake.NewScript(tt.replies...)
			var sl sleeps
			p := providers.Retry(fake.New(script), providers.RetryConfig{Sleep: sl.Sleep})
			got, err := call(context.Background(), p, providers.Request{})
			if tt.wantErr == nil && (err != nil || got.Text != "done") {
				t.Fatalf("got %q, %v; want \"done\"", got.Text, err)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if n := len(script.Requests()); n != tt.wantCalls {
				t.Errorf("%d calls, want %d", n, tt.wantCalls)
			}
			if n := len(sl.got()); n != tt.wantCalls-1 {
				t.Errorf("slept %d times for %d calls, want one sleep between calls", n, tt.wantCalls)
			}
			if tt.wantSleeps != nil && !cmp.Equal(sl.got(), tt.wantSleeps) {
				t.Errorf("slept %v, want %v", sl.got(), tt.wantSleeps)
			}
		})
	}
}

func TestRetryBackoffIsCappedAndJittered(t *testing.T) {
	var replies []fake.Reply
	for range 8 {
		replies = append(replies, fake.Reply{Status: 503})
	}
	var sl sleeps
	cfg := providers.RetryConfig{MaxRetries: 7, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond, Sleep: sl.Sleep}
	_, err := call(context.Background(), providers.Retry(fake.New(fake.NewScript(replies...)), cfg), providers.Request{})
	if !errors.Is(err, providers.ErrOverloaded) {
		t.Fatalf("err = %v, want ErrOverloaded", err)
	}
	got := sl.got()
	if len(got) != 7 {
		t.Fatalf("slept %d times, want 7", len(got))
	}
	for i, d := range got {
		ceil := min(100*time.Millisecond<<i, 300*time.Millisecond)
		if d < 0 || d > ceil {
			t.Errorf("sleep %d = %v, want within [0, %v]", i, d, ceil)
		}
	}
}

func TestRetryTransportErrors(t *testing.T) {
	transport := []error{
		io.ErrUnexpectedEOF,
		syscall.ECONNRESET,
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
	}
	for _, terr := range transport {
		t.Run(terr.Error(), func(t *testing.T) {
			p := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){
				func(providers.Request) (providers.Stream, error) { return nil, terr },
				func(providers.Request) (providers.Stream, error) { return textDeltas("fine"), nil },
			}}
			var sl sleeps
			got, err := call(context.Background(), providers.Retry(p, providers.RetryConfig{Sleep: sl.Sleep}), providers.Request{})
			if err != nil || got.Text != "fine" || p.count() != 2 {
				t.Errorf("got %q, %v after %d calls; want \"fine\" after 2", got.Text, err, p.count())
			}
		})
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	script := fake.NewScript(fake.Reply{Status: 500}, fake.Reply{Text: "late"})
	sleep := func(ctx context.Context, d time.Duration) error {
		cancel() // the user gave up while we waited
		return ctx.Err()
	}
	_, err := call(ctx, providers.Retry(fake.New(script), providers.RetryConfig{Sleep: sleep}), providers.Request{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := len(script.Requests()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

func TestRetryDefaultSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	script := fake.NewScript(fake.Reply{Status: 429, RetryAfter: 20 * time.Second})
	_, err := call(ctx, providers.Retry(fake.New(script), providers.RetryConfig{}), providers.Request{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}
