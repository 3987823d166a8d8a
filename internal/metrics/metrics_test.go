package metrics

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// scrape serves m with src and returns the samples, by `name{labels}`, after checking the
// text format: every sample's family has HELP and TYPE before it, names and labels are
// well formed, values parse, histogram buckets rise.
func scrape(t *testing.T, m *Metrics, src Source) map[string]float64 {
	t.Helper()
	srv := httptest.NewServer(Handler(m, src))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ContentType {
		t.Fatalf("scrape: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return parseText(t, resp.Body)
}

var (
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$`)
	typeRE   = regexp.MustCompile(`^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$`)
)

func parseText(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	typed := map[string]string{}
	helped := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "# HELP "); ok {
			helped[strings.Fields(h)[0]] = true
			continue
		}
		if strings.HasPrefix(line, "# TYPE ") {
			m := typeRE.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("bad TYPE line %q", line)
			}
			typed[m[1]] = m[2]
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("bad sample line %q", line)
		}
		family := m[1]
		if typed[family] == "" {
			family = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(family, "_bucket"), "_sum"), "_count")
			if typed[family] != "histogram" {
				t.Fatalf("sample %q without a TYPE", line)
			}
		}
		if !helped[family] {
			t.Fatalf("sample %q without a HELP", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		key := m[1] + m[2]
		if _, dup := out[key]; dup {
			t.Fatalf("sample %q twice", key)
		}
		out[key] = v
	}
	return out
}

func TestStoreCounts(t *testing.T) {
	inner, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	// Before this process: two messages waiting, one reply unsent.
	err = inner.Update(func(tx persistence.Tx) error {
		for _, k := range []string{"a", "b"} {
			if _, err := tx.AppendInbox(k, messages.Inbound{Channel: "telegram", Text: "old"}); err != nil {
				return err
			}
		}
		_, err := tx.AppendOutbox("a", messages.Outbound{Channel: "telegram", Text: "old"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	m := New()
	s := m.Store(inner)
	var seq uint64
	err = s.Update(func(tx persistence.Tx) error {
		if seq, err = tx.AppendInbox("c", messages.Inbound{Channel: "discord", Text: "new"}); err != nil {
			return err
		}
		if _, err := tx.AppendInbox("c", messages.Inbound{Channel: "telegram", System: true, Source: "cron:x"}); err != nil {
			return err
		}
		_, err := tx.AppendOutbox("c", messages.Outbound{Channel: "discord", Text: "hi"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := s.Update(func(tx persistence.Tx) error {
		_, _ = tx.AppendInbox("c", messages.Inbound{Channel: "discord", Text: "rolled back"})
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("failed update: %v", err)
	}
	src := Source{StoredSessions: inner.SessionCount}
	if _, ok := scrape(t, m, src)["reef_queue_depth"]; ok {
		t.Error("the queue depth is shown before Prime counted the rows stored before")
	}
	if err := m.Prime(func(began func()) (int, int, error) {
		c, err := inner.Counts(began)
		return c.Inbox, c.Outbox, err
	}); err != nil {
		t.Fatal(err)
	}
	got := scrape(t, m, src)
	want := map[string]float64{
		`reef_messages_in_total{channel="discord"}`:  1, // the cron event is reef's own, the rollback never was
		`reef_messages_out_total{channel="discord"}`: 1,
		`reef_queue_depth`:                           2 + 2,
		`reef_outbox_backlog`:                        1 + 1,
		`reef_sessions_stored`:                       3,
		`reef_storage_commit_errors_total`:           1,
		`reef_storage_commit_duration_seconds_count`: 2,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	// Answered and sent: the queue and the backlog shrink; a deleted session takes its rows.
	err = s.Update(func(tx persistence.Tx) error {
		if err := tx.DeleteInbox("c", seq); err != nil {
			return err
		}
		return tx.DeleteSession("a")
	})
	if err != nil {
		t.Fatal(err)
	}
	got = scrape(t, m, src)
	if got["reef_queue_depth"] != 2 || got["reef_outbox_backlog"] != 1 || got["reef_sessions_stored"] != 2 {
		t.Errorf("after answering and deleting: queue %v, backlog %v, stored %v, want 2, 1, 2",
			got["reef_queue_depth"], got["reef_outbox_backlog"], got["reef_sessions_stored"])
	}
}

// Priming while writers commit counts every row once.
func TestStorePrimeUnderWrites(t *testing.T) {
	inner, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	m := New()
	s := m.Store(inner)
	write := func(i int) error {
		return s.Update(func(tx persistence.Tx) error {
			_, err := tx.AppendInbox(fmt.Sprintf("s%d", i%7), messages.Inbound{Channel: "fake", Text: "x"})
			return err
		})
	}
	for i := range 50 {
		if err := write(i); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		for i := 50; i < 250; i++ {
			if err := write(i); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	if err := m.Prime(func(began func()) (int, int, error) {
		c, err := inner.Counts(began)
		return c.Inbox, c.Outbox, err
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := m.stored.inbox.Load(); got != 250 {
		t.Fatalf("queue depth %d, want 250", got)
	}
}

func TestProviderCounts(t *testing.T) {
	m := New()
	script := fakellm.NewScript(
		fakellm.Reply{Text: "hello", Usage: messages.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50}},
		fakellm.Reply{Status: 500},
	)
	p := m.Provider("openai", fakellm.New(script))
	drain := func() error {
		s, err := p.Stream(context.Background(), providers.Request{Model: "gpt-x"})
		if err != nil {
			return err
		}
		defer s.Close()
		for {
			if _, err := s.Next(); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
		}
	}
	if err := drain(); err != nil {
		t.Fatal(err)
	}
	if err := drain(); err == nil {
		t.Fatal("the 500 did not fail")
	}
	got := scrape(t, m, Source{})
	for k, v := range map[string]float64{
		`reef_model_tokens_total{provider="openai",model="gpt-x",kind="input"}`:              100,
		`reef_model_tokens_total{provider="openai",model="gpt-x",kind="output"}`:             20,
		`reef_model_tokens_total{provider="openai",model="gpt-x",kind="cache_read"}`:         50,
		`reef_model_call_duration_seconds_count{provider="openai",model="gpt-x"}`:            2,
		`reef_model_call_duration_seconds_bucket{provider="openai",model="gpt-x",le="+Inf"}`: 2,
		`reef_model_call_errors_total{provider="openai",model="gpt-x"}`:                      1,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestFollowEvents(t *testing.T) {
	m := New()
	bus := events.NewBus()
	m.Watch(bus)
	behind := bus.Subscribe("", 1) // a watcher that reads nothing: it gets one event, the rest are dropped
	yes, no := true, false
	for _, ev := range []messages.RunEvent{
		{Kind: messages.RunStart}, {Kind: messages.RunTextDelta, Text: "x"},
		{Kind: messages.RunToolEnd, Name: "exec", OK: &yes}, {Kind: messages.RunToolEnd, Name: "exec", OK: &no},
		{Kind: messages.RunToolEnd, Name: `we"ird`, OK: &yes},
		{Kind: messages.SubagentStart}, {Kind: messages.SubagentStart}, {Kind: messages.SubagentEnd},
		{Kind: messages.RunEnd, Status: "ok"}, {Kind: messages.RunEnd, Status: "ok"}, {Kind: messages.RunEnd, Status: "error"},
	} {
		bus.Publish(ev)
	}
	behind.Close()
	got := scrape(t, m, Source{LiveSessions: func() int { return 3 },
		Connectors: func() []Connector {
			return []Connector{{Name: "telegram", Up: true, Restarts: 2}, {Name: "discord:work"}}
		}})
	for k, v := range map[string]float64{
		`reef_runs_total{outcome="ok"}`:                         2,
		`reef_runs_total{outcome="error"}`:                      1,
		`reef_tool_calls_total{tool="exec",outcome="ok"}`:       1,
		`reef_tool_calls_total{tool="exec",outcome="error"}`:    1,
		`reef_tool_calls_total{tool="we\"ird",outcome="ok"}`:    1,
		`reef_subagents_running`:                                1,
		`reef_sessions_live`:                                    3,
		`reef_connector_up{channel="telegram"}`:                 1,
		`reef_connector_up{channel="discord:work"}`:             0,
		`reef_connector_restarts_total{channel="telegram"}`:     2,
		`reef_connector_restarts_total{channel="discord:work"}`: 0,
		`reef_events_lost_total`:                                10,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	h := newHistogram([]float64{0.1, 1})
	for _, d := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond, 3 * time.Second} {
		h.observe(d)
	}
	var b strings.Builder
	w := bufio.NewWriter(&b)
	(&expo{w: w}).histogram("x", `a="b"`, h)
	w.Flush()
	want := `x_bucket{a="b",le="0.1"} 2
x_bucket{a="b",le="1"} 3
x_bucket{a="b",le="+Inf"} 4
x_sum{a="b"} 3.65
x_count{a="b"} 4
`
	if b.String() != want {
		t.Errorf("histogram:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestHandlerMethod(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler(New(), Source{}).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics = %d, want 405", rec.Code)
	}
}

// TestStorageUp: reef_storage_up says whether the database answers (0 during a storage
// outage), and is left out when the gateway gives no source for it.
func TestStorageUp(t *testing.T) {
	m := New()
	for _, up := range []bool{true, false} {
		got := scrape(t, m, Source{Storage: func() bool { return up }})
		want := 0.0
		if up {
			want = 1
		}
		if v, ok := got["reef_storage_up"]; !ok || v != want {
			t.Errorf("storage up %v: reef_storage_up = %v (present %v), want %v", up, v, ok, want)
		}
	}
	if _, ok := scrape(t, m, Source{})["reef_storage_up"]; ok {
		t.Errorf("reef_storage_up without a source")
	}
}
