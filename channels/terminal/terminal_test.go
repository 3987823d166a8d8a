package terminal

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
)

// wait bounds every wait for something that must happen.
const wait = 5 * time.Second

// quiet is how long a test watches for something that must not happen.
const quiet = 150 * time.Millisecond

// syncBuffer is a bytes.Buffer safe to read while the terminal writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness runs a Terminal with a deliver func that records every inbound on a channel.
type harness struct {
	t         *testing.T
	term      *Terminal
	out, info *syncBuffer
	inbound   chan messages.Inbound
	runErr    chan error
	cancel    context.CancelFunc
}

// start runs a terminal on in. deliverErr, when set, decides the error deliver returns.
func start(t *testing.T, cfg Config, deliverErr func(messages.Inbound) error) *harness {
	t.Helper()
	h := &harness{t: t, out: &syncBuffer{}, info: &syncBuffer{},
		inbound: make(chan messages.Inbound, 100), runErr: make(chan error, 1)}
	cfg.Out, cfg.Info = h.out, h.info
	h.term = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		h.runErr <- h.term.Run(ctx, func(ctx context.Context, in messages.Inbound) error {
			h.inbound <- in
			if deliverErr != nil {
				return deliverErr(in)
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.runErr:
		case <-time.After(wait):
			t.Error("Run did not return after cancel")
		}
	})
	return h
}

// next returns the next delivered inbound.
func (h *harness) next() messages.Inbound {
	h.t.Helper()
	select {
	case in := <-h.inbound:
		return in
	case <-time.After(wait):
		h.t.Fatal("no inbound delivered")
		return messages.Inbound{}
	}
}

// noInbound fails if a line is delivered within quiet.
func (h *harness) noInbound(why string) {
	h.t.Helper()
	select {
	case in := <-h.inbound:
		h.t.Fatalf("%s: %q delivered", why, in.Text)
	case <-time.After(quiet):
	}
}

// answer plays what the Connector does after a run: from another goroutine, the reply
// (unless reply is "") and then the run's final event. It returns when both were handled.
func (h *harness) answer(reply string, events ...messages.TurnEvent) {
	h.t.Helper()
	done := make(chan error, 1)
	go func() {
		ctx := context.Background()
		for _, ev := range events {
			h.term.Progress(ctx, ev)
		}
		if reply != "" {
			if _, err := h.term.Send(ctx, messages.Outbound{ChatID: ChatID, Text: reply}); err != nil {
				done <- err
				return
			}
		}
		h.term.Progress(ctx, messages.TurnEvent{ChatID: ChatID, Kind: messages.TurnFinal})
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			h.t.Fatal(err)
		}
	case <-time.After(wait):
		h.t.Fatal("answer blocked")
	}
}

func (h *harness) waitDone() {
	h.t.Helper()
	select {
	case <-h.term.Done():
	case <-time.After(wait):
		h.t.Fatal("Done not closed")
	}
}

func (h *harness) notDone(why string) {
	h.t.Helper()
	select {
	case <-h.term.Done():
		h.t.Fatalf("Done closed %s", why)
	case <-time.After(quiet):
	}
}

func TestScriptModeOneInboundPerLineInOrder(t *testing.T) {
	h := start(t, Config{In: strings.NewReader("first\n\n   \nsecond line\r\nlast without newline"), UserName: "ann"}, nil)
	var got []string
	for range 3 {
		in := h.next()
		if in.ChatID != ChatID || in.ChatType != messages.ChatDirect || in.SenderID != SenderID || in.SenderName != "ann" {
			t.Errorf("inbound %q: chat %q type %q sender %q name %q, want %q %q %q %q", in.Text,
				in.ChatID, in.ChatType, in.SenderID, in.SenderName, ChatID, messages.ChatDirect, SenderID, "ann")
		}
		if !h.term.Busy() {
			t.Errorf("Busy() = false while %q waits for its answer", in.Text)
		}
		got = append(got, in.Text)
		h.answer("reply to " + in.Text)
	}
	if diff := cmp.Diff([]string{"first", "second line", "last without newline"}, got); diff != "" {
		t.Errorf("delivered texts (-want +got):\n%s", diff)
	}
	h.waitDone()
	want := "reply to first\nreply to second line\nreply to last without newline\n"
	if got := h.out.String(); got != want {
		t.Errorf("stdout = %q, want only the replies %q", got, want)
	}
	if got := h.info.String(); got != "" {
		t.Errorf("script mode wrote %q to Info, want nothing", got)
	}
	h.noInbound("after EOF")
	select {
	case err := <-h.runErr:
		t.Fatalf("Run returned %v at EOF; it must wait for ctx", err)
	default:
	}
	h.cancel()
	select {
	case err := <-h.runErr:
		if err != nil {
			t.Errorf("Run after cancel = %v, want nil", err)
		}
		h.runErr <- err // for the cleanup
	case <-time.After(wait):
		t.Fatal("Run did not return after cancel")
	}
}

func TestScriptModeWaitsForTheFinalEventBeforeTheNextLine(t *testing.T) {
	h := start(t, Config{In: strings.NewReader("one\ntwo\n")}, nil)
	if in := h.next(); in.Text != "one" {
		t.Fatalf("first inbound %q, want one", in.Text)
	}
	// A reply and progress events are not the end of the run: only TurnFinal is.
	ctx := context.Background()
	h.term.Send(ctx, messages.Outbound{ChatID: ChatID, Text: "partial"})
	h.term.Progress(ctx, messages.TurnEvent{Kind: messages.TurnStarted})
	h.term.Progress(ctx, messages.TurnEvent{Kind: messages.ToolStarted, Label: "read a"})
	h.noInbound("before the first run's final event")
	h.answer("")
	if in := h.next(); in.Text != "two" {
		t.Fatalf("second inbound %q, want two", in.Text)
	}
	h.notDone("before the last line was answered")
	h.answer("done")
	h.waitDone()
	if h.term.Busy() {
		t.Error("Busy() = true after the last answer")
	}
	if got, want := h.out.String(), "partial\ndone\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestFinalOfAnUnrelatedRunIsNotTakenAsTheAnswer(t *testing.T) {
	pr, pw := io.Pipe()
	h := start(t, Config{In: pr}, nil)
	// A run recovered at startup ends before the user typed anything.
	h.term.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnFinal})
	go pw.Write([]byte("a\nb\n"))
	if in := h.next(); in.Text != "a" {
		t.Fatalf("inbound %q, want a", in.Text)
	}
	h.noInbound("line b while line a is unanswered")
	h.answer("A")
	if in := h.next(); in.Text != "b" {
		t.Fatalf("inbound %q, want b", in.Text)
	}
	pw.Close()
	h.answer("B")
	h.waitDone()
}

func TestDeliverErrorDoesNotStopTheLoop(t *testing.T) {
	h := start(t, Config{In: strings.NewReader("bad\ngood\n")}, func(in messages.Inbound) error {
		if in.Text == "bad" {
			return errors.New("storage: disk full")
		}
		return nil
	})
	if in := h.next(); in.Text != "bad" {
		t.Fatalf("inbound %q, want bad", in.Text)
	}
	// Nothing answers the refused line: the terminal must go on by itself.
	if in := h.next(); in.Text != "good" {
		t.Fatalf("inbound %q, want good", in.Text)
	}
	h.answer("fine")
	h.waitDone()
	if got, want := h.out.String(), "fine\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := h.info.String(); !strings.Contains(got, "could not accept") || !strings.Contains(got, "disk full") {
		t.Errorf("Info = %q, want a notice about the refused line", got)
	}
}

func TestTooLongLineIsRefusedWithANotice(t *testing.T) {
	long := strings.Repeat("x", 100)
	h := start(t, Config{In: strings.NewReader(long + "\n" + strings.Repeat("y", 10) + "\nshort\n"), MaxLine: 10}, nil)
	if in := h.next(); in.Text != strings.Repeat("y", 10) {
		t.Fatalf("inbound %q, want the line of exactly MaxLine bytes", in.Text)
	}
	h.answer("y")
	if in := h.next(); in.Text != "short" {
		t.Fatalf("inbound %q, want short", in.Text)
	}
	h.answer("s")
	h.waitDone()
	if got := h.info.String(); !strings.Contains(got, "longer than the limit of 10 bytes") {
		t.Errorf("Info = %q, want a too-long notice", got)
	}
	if got, want := h.out.String(), "y\ns\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestLineLimitCountsTheNormalisedText(t *testing.T) {
	// 8 bytes as read, but each invalid byte becomes a 3-byte U+FFFD: 16 bytes, over 10.
	h := start(t, Config{In: strings.NewReader("\xffa\xffa\xffa\xffa\n\x00ok\x00\n"), MaxLine: 10}, nil)
	if in := h.next(); in.Text != "ok" {
		t.Fatalf("inbound %q, want %q (the line with invalid bytes refused, NULs removed)", in.Text, "ok")
	}
	h.answer("fine")
	h.waitDone()
	if got := h.info.String(); !strings.Contains(got, "longer than the limit") {
		t.Errorf("Info = %q, want a too-long notice", got)
	}
}

// TestScriptModeReportsAFailedRun: a failed run is said on Info, and Failed tells reef chat
// to exit non-zero.
func TestScriptModeReportsAFailedRun(t *testing.T) {
	h := start(t, Config{In: strings.NewReader("hi\n")}, nil)
	h.next()
	if h.term.Failed() {
		t.Fatal("Failed() before any run")
	}
	h.term.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnFinal, IsError: true,
		Text: "openai: model \"gpt-5x\" not found"})
	h.waitDone()
	if !h.term.Failed() {
		t.Error("Failed() = false after a failed run")
	}
	if got, want := h.info.String(), "reef: the run failed: openai: model \"gpt-5x\" not found\n"; got != want {
		t.Errorf("Info = %q, want %q", got, want)
	}
}

func TestScriptModeHidesProgress(t *testing.T) {
	h := start(t, Config{In: strings.NewReader("go\n"), Greeting: "hello"}, nil)
	h.next()
	h.answer("answer",
		messages.TurnEvent{Kind: messages.TextDelta, Text: "thinking"},
		messages.TurnEvent{Kind: messages.ToolStarted, Label: "exec: ls"},
		messages.TurnEvent{Kind: messages.ToolFinished, Label: "exec: ls", IsError: true})
	h.waitDone()
	if got := h.info.String(); got != "" {
		t.Errorf("Info = %q, want nothing in script mode", got)
	}
	if got, want := h.out.String(), "answer\n"; got != want {
		t.Errorf("Out = %q, want %q", got, want)
	}
}

func TestCancelEndsRunPromptly(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness, pw *io.PipeWriter)
	}{
		{"blocked reading input", func(h *harness, pw *io.PipeWriter) {}},
		{"waiting for an answer", func(h *harness, pw *io.PipeWriter) {
			go pw.Write([]byte("hi\n"))
			h.next()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			h := start(t, Config{In: pr}, nil)
			tt.setup(h, pw)
			h.cancel()
			select {
			case err := <-h.runErr:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
				h.runErr <- err
			case <-time.After(2 * time.Second):
				t.Fatal("Run still running 2s after cancel")
			}
		})
	}
}

func TestReadLineCapsMemoryAndKeepsShortLines(t *testing.T) {
	term := New(Config{MaxLine: 5, In: strings.NewReader("abc\n" + strings.Repeat("z", 200000) + "\n\r\nend")})
	go term.read()
	var got []string
	for l := range term.lines {
		got = append(got, l)
	}
	want := []string{"abc", "zzzzzz", "", "end"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestSendReportsWriteErrors(t *testing.T) {
	term := New(Config{Out: failingWriter{}})
	if _, err := term.Send(context.Background(), messages.Outbound{Text: "x"}); err == nil {
		t.Error("Send to a broken writer returned nil")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestARestartedRunLosesNoLine(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &syncBuffer{}
	term := New(Config{In: pr, Out: out})
	inbound := make(chan string, 10)
	deliver := func(_ context.Context, in messages.Inbound) error {
		inbound <- in.Text
		go func() {
			term.Send(context.Background(), messages.Outbound{Text: "re: " + in.Text})
			term.Progress(context.Background(), messages.TurnEvent{Kind: messages.TurnFinal})
		}()
		return nil
	}
	runOnce := func(lines string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- term.Run(ctx, deliver) }()
		select {
		case got := <-inbound:
			if want := strings.TrimSpace(lines); got != want {
				t.Errorf("delivered %q, want %q", got, want)
			}
		case <-time.After(wait):
			t.Fatalf("%q not delivered", lines)
		}
		cancel() // the Connector restarts the channel
		select {
		case <-ran:
		case <-time.After(wait):
			t.Fatal("Run did not return after cancel")
		}
	}
	go pw.Write([]byte("first\n"))
	runOnce("first\n")
	// Between two Runs a line is read (the write returns once it was read) ...
	if _, err := pw.Write([]byte("second\n")); err != nil {
		t.Fatal(err)
	}
	// ... and the next Run delivers it.
	runOnce("second\n")
}
