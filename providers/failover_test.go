package providers_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

func TestFailover(t *testing.T) {
	tests := []struct {
		name        string
		first       fake.Reply
		wantErr     error // nil: the second target answers "second"
		wantSecond  int   // calls the second target got
		wantAnswer  string
		wantLabelIn string // the error names this label
	}{
		{"500 moves on", fake.Reply{Status: 500}, nil, 1, "second", ""},
		{"401 moves on", fake.Reply{Status: 401}, nil, 1, "second", ""},
		{"cut before the first event moves on", fake.Reply{CutInText: true}, nil, 1, "second", ""},
		{"first answers", fake.Reply{Text: "first"}, nil, 0, "first", ""},
		{"overflow stays", fake.Reply{Overflow: true}, providers.ErrContextOverflow, 0, "", "a/one"},
		{"cut after events passes through", fake.Reply{Text: "half of it", CutInText: true},
			providers.ErrStreamCut, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s1, s2 := fake.NewScript(tt.first), fake.NewScript(fake.Reply{Text: "second"})
			p := providers.Failover(
				providers.Target{Label: "a/one", Provider: fake.New(s1), Model: "one"},
				providers.Target{Label: "b/two", Provider: fake.New(s2), Model: "two"},
			)
			s, err := p.Stream(context.Background(), providers.Request{Model: "configured"})
			var got answer
			if err == nil {
				got, err = drain(s)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && got.Text != tt.wantAnswer {
				t.Errorf("answer %q, want %q", got.Text, tt.wantAnswer)
			}
			if err != nil && !strings.Contains(err.Error(), tt.wantLabelIn) {
				t.Errorf("error %q does not name %q", err, tt.wantLabelIn)
			}
			if n := len(s2.Requests()); n != tt.wantSecond {
				t.Errorf("second target got %d calls, want %d", n, tt.wantSecond)
			}
			if r := s1.Requests(); len(r) != 1 || r[0].Model != "one" {
				t.Errorf("first target requests %+v, want one with model \"one\"", r)
			}
			if r := s2.Requests(); len(r) == 1 && r[0].Model != "two" {
				t.Errorf("second target got model %q, want \"two\"", r[0].Model)
			}
		})
	}
}

func TestFailoverAllFail(t *testing.T) {
	p := providers.Failover(
		providers.Target{Label: "a/one", Provider: fake.New(fake.NewScript(fake.Reply{Status: 503}))},
		providers.Target{Label: "b/two", Provider: fake.New(fake.NewScript(fake.Reply{Status: 429}))},
	)
	_, err := p.Stream(context.Background(), providers.Request{})
	if !errors.Is(err, providers.ErrRateLimited) {
		t.Fatalf("err = %v, want the last error (rate limited)", err)
	}
	for _, label := range []string{"a/one", "b/two"} {
		if !strings.Contains(err.Error(), label) {
			t.Errorf("error %q does not name %s", err, label)
		}
	}
}

func TestFailoverStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	second := fake.NewScript()
	p := providers.Failover(
		providers.Target{Label: "a", Provider: fake.New(fake.NewScript(fake.Reply{Hang: true}))},
		providers.Target{Label: "b", Provider: fake.New(second)},
	)
	if _, err := p.Stream(ctx, providers.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := len(second.Requests()); n != 0 {
		t.Errorf("second target got %d calls after cancellation", n)
	}
}

func TestFailoverAnsweredBy(t *testing.T) {
	sem := providers.NewSemaphore(1)
	p := providers.Limit(providers.Retry(providers.Failover(
		providers.Target{Label: "a/one", Provider: fake.New(fake.NewScript(fake.Reply{Status: 400}))},
		providers.Target{Label: "b/two", Provider: fake.New(fake.NewScript())},
	), providers.RetryConfig{}), sem)
	s, err := p.Stream(context.Background(), providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := providers.AnsweredBy(s); got != "b/two" {
		t.Errorf("AnsweredBy = %q, want b/two (through Limit and Retry)", got)
	}
	if got := providers.AnsweredBy(textDeltas("x")); got != "" {
		t.Errorf("AnsweredBy of a plain stream = %q, want empty", got)
	}
}

func TestFailoverNoTargets(t *testing.T) {
	if _, err := providers.Failover().Stream(context.Background(), providers.Request{}); err == nil {
		t.Error("no targets: got no error")
	}
}
