// Package terminal is the channel behind `reef chat`: it reads one message per line and prints
// the agent's replies. Interactive mode shows a prompt and short lines for tool activity;
// script mode (stdin not a terminal) prints only replies, so it can be piped.
//
// Each line is delivered and then answered before the next line is read, so a script's lines
// get one reply each, in order.
package terminal

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
)

// ChatID is the chat id of the terminal conversation; SenderID is its (owner) sender.
const (
	ChatID   = "local"
	SenderID = "owner"
)

// Config configures a Terminal.
type Config struct {
	In          io.Reader
	Out         io.Writer // replies
	Info        io.Writer // tool lines (interactive mode) and notices (both modes); default Out
	Interactive bool      // show a prompt, tool activity and the model's interim text
	UserName    string
	Greeting    string // printed to Info before the first prompt (interactive mode)
	// MaxLine is the longest line, in bytes, handed to reef (default 32 KiB, the gateway's
	// default inbound limit). A longer line is refused here with a notice on Info: the
	// gateway answers an oversized message with a notice but no finished run, which would
	// leave the terminal waiting for ever.
	MaxLine int
	// Gate, when set, holds back reading input until it is closed: `reef chat` first lets
	// reef answer what an earlier run left pending, so each new line gets its own reply.
	Gate <-chan struct{}
}

// DefaultMaxLine is the default Config.MaxLine.
const DefaultMaxLine = 32 << 10

// Terminal is the terminal channel.
type Terminal struct {
	cfg   Config
	final chan struct{} // one value per finished run
	done  chan struct{} // closed after EOF, once the last line was answered
	busy  atomic.Bool
	mu    sync.Mutex // serialises writes
	once  sync.Once

	lines     chan string // input lines; closed at EOF
	startRead sync.Once   // one reader for the Terminal's life, so a restarted Run loses no line
}

var (
	_ channels.Channel          = (*Terminal)(nil)
	_ channels.ProgressRenderer = (*Terminal)(nil)
)

// New returns a Terminal. It starts nothing.
func New(cfg Config) *Terminal {
	if cfg.Info == nil {
		cfg.Info = cfg.Out
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	return &Terminal{cfg: cfg, final: make(chan struct{}, 1), done: make(chan struct{}), lines: make(chan string)}
}

// Done is closed when the input ended and every line was answered.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Busy reports whether a run is answering a line now.
func (t *Terminal) Busy() bool { return t.busy.Load() }

// Run reads lines until EOF or ctx ends. After EOF it waits for ctx (the caller decides when
// reef stops), so the connector does not mistake the end of input for a failure. The input is
// read by one goroutine for the Terminal's life (a read cannot be cancelled): a line read
// while no Run is going waits for the next Run.
func (t *Terminal) Run(ctx context.Context, deliver channels.Deliver) error {
	if t.cfg.Gate != nil {
		select {
		case <-t.cfg.Gate:
		case <-ctx.Done():
			return nil
		}
	}
	t.startRead.Do(func() { go t.read() })
	if t.cfg.Greeting != "" {
		t.info("%s", t.cfg.Greeting)
	}
	for {
		t.prompt()
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case line, ok = <-t.lines:
		}
		if !ok {
			t.once.Do(func() { close(t.done) })
			<-ctx.Done()
			return nil
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		// Measure as the gateway does, after making the text valid UTF-8 without NUL bytes
		// (an invalid byte becomes a 3-byte U+FFFD).
		line = strings.ReplaceAll(strings.ToValidUTF8(line, "\uFFFD"), "\x00", "")
		if len(line) > t.cfg.MaxLine {
			// Only MaxLine+1 bytes of the line were kept, so its real length is unknown here.
			t.notice("That line is longer than the limit of %s, so it was not sent. Please send it in smaller parts or as a file.",
				size(t.cfg.MaxLine))
			continue
		}
		t.drainFinal() // a run this terminal did not start (one recovered at startup) may have ended
		t.busy.Store(true)
		err := deliver(ctx, messages.Inbound{
			ChatID: ChatID, ChatType: messages.ChatDirect, SenderID: SenderID,
			SenderName: t.cfg.UserName, Text: line,
		})
		if err != nil {
			t.busy.Store(false)
			if ctx.Err() != nil {
				return nil
			}
			t.notice("could not accept the message: %v", err)
			continue
		}
		select {
		case <-t.final:
		case <-ctx.Done():
			return nil
		}
		t.busy.Store(false)
	}
}

// read sends each input line to t.lines and closes it at EOF. Of a line longer than MaxLine
// only MaxLine+1 bytes are kept (enough for Run to refuse it), so input without newlines
// cannot exhaust memory.
func (t *Terminal) read() {
	defer close(t.lines)
	r := bufio.NewReaderSize(t.cfg.In, 64<<10)
	for {
		line, err := t.readLine(r)
		line = strings.TrimRight(line, "\r\n")
		if line != "" || err == nil {
			t.lines <- line
		}
		if err != nil {
			return
		}
	}
}

// readLine reads up to and including '\n', keeping at most MaxLine+1 bytes of it.
func (t *Terminal) readLine(r *bufio.Reader) (string, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if room := t.cfg.MaxLine + 1 - len(buf); room > 0 {
			buf = append(buf, chunk[:min(len(chunk), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return string(buf), err
		}
	}
}

// Send prints a reply.
func (t *Terminal) Send(_ context.Context, out messages.Outbound) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := strings.TrimRight(out.Text, "\n")
	if t.cfg.Interactive {
		text = "\n" + text + "\n"
	}
	if _, err := fmt.Fprintln(t.cfg.Out, text); err != nil {
		return nil, fmt.Errorf("terminal: send: %w", err)
	}
	return []string{""}, nil
}

// Progress shows tool activity (interactive mode) and notes the end of each run.
func (t *Terminal) Progress(_ context.Context, ev messages.TurnEvent) {
	switch ev.Kind {
	case messages.TurnFinal:
		select {
		case t.final <- struct{}{}:
		default:
		}
	case messages.ToolStarted:
		t.info("  · %s", ev.Label)
	case messages.ToolFinished:
		if ev.IsError && ev.Label != "" {
			t.info("  ✗ %s", ev.Label)
		}
	case messages.TextDelta:
		t.info("%s", strings.TrimSpace(ev.Text))
	}
}

func (t *Terminal) prompt() {
	if !t.cfg.Interactive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprint(t.cfg.Out, "› ")
}

func size(n int) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// drainFinal forgets a run end that arrived while no line was waiting for one.
func (t *Terminal) drainFinal() {
	select {
	case <-t.final:
	default:
	}
}

// notice prints to Info in both modes: a problem with a line must not pass silently in a script.
func (t *Terminal) notice(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.cfg.Info, format+"\n", args...)
}

func (t *Terminal) info(format string, args ...any) {
	if !t.cfg.Interactive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.cfg.Info, format+"\n", args...)
}
