// Package terminal is the channel behind `reef chat`: it reads one message per line and prints
// the agent's replies. Interactive mode shows a prompt and short lines for tool activity;
// script mode (stdin not a terminal) prints only replies, so it can be piped.
//
// In script mode each line is delivered and then answered before the next line is read, so
// a script's lines get one reply each, in order. In interactive mode input is read while a
// run goes, as on every other channel: a command (/status, stop) is answered at once and
// other text is queued by the session's queue mode, which the terminal shows.
//
// The terminal follows a run through the Connector's TurnEvents (channels.ProgressRenderer),
// as WebChat and the platform drafts do, not through the run-event bus (package events): a
// script's next line waits for the run's TurnFinal, which comes after the reply on the chat's
// ordered queue and also ends runs that never reach a Turn (commands, outage notices); the
// bus is lossy by design, carries no chat, and its run.end comes before the reply is sent.
package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/term"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/termtext"
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
	// LineEditor (interactive mode) means In and Out are a terminal that neither buffers
	// lines nor echoes (the caller set that mode): the terminal edits the line itself, prints
	// replies above the line being typed, and clears the screen on Ctrl-L. Everything,
	// notices included, then goes to Out.
	LineEditor bool
	Color      bool // colour the prompt, tool lines and errors (interactive mode)
	UserName   string
	Greeting   string // printed to Info before the first prompt (interactive mode)
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
	cfg    Config
	final  chan struct{} // one value per finished run
	done   chan struct{} // closed after EOF, once the last line was answered
	busy   atomic.Bool   // a run is going, or a line waits for its answer
	failed atomic.Bool   // a run ended in an error
	mu     sync.Mutex    // serialises writes
	once   sync.Once
	ed     *term.Terminal // the line editor (Config.LineEditor) until the input ends; guarded by mu
	left   bool           // Leave ended the prompt's line; guarded by mu
	shown  bool           // the prompt is the last thing written and no line was read since; guarded by mu

	lines     chan string // input lines; closed at EOF
	startRead sync.Once   // one reader for the Terminal's life, so a restarted Run loses no line

	planMu sync.Mutex
	plan   map[string]string // the run's plan steps shown: id → status and progress
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
	t := &Terminal{cfg: cfg, final: make(chan struct{}, 1), done: make(chan struct{}), lines: make(chan string)}
	if cfg.Interactive && cfg.LineEditor {
		t.ed = term.NewTerminal(struct {
			io.Reader
			io.Writer
		}{cfg.In, cfg.Out}, t.paint(promptText, colorPrompt))
	}
	return t
}

// Done is closed when the input ended and every line was answered.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Busy reports whether a run is answering a line now.
func (t *Terminal) Busy() bool { return t.busy.Load() }

// Failed reports whether a run ended in an error (the model unreachable, a model that does
// not exist...): a script can tell from reef chat's exit status.
func (t *Terminal) Failed() bool { return t.failed.Load() }

// SetWidth tells the line editor the terminal's width in columns, so long lines wrap right.
func (t *Terminal) SetWidth(width, height int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ed != nil && width > 0 {
		t.ed.SetSize(width, height)
	}
}

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
	if t.cfg.Interactive {
		return t.runInteractive(ctx, deliver)
	}
	for {
		line, ok, stop := t.next(ctx)
		if stop {
			return nil
		}
		if !ok {
			t.once.Do(func() { close(t.done) })
			<-ctx.Done()
			return nil
		}
		t.drainFinal() // a run this terminal did not start (one recovered at startup) may have ended
		t.busy.Store(true)
		if !t.deliver(ctx, deliver, line) {
			t.busy.Store(false)
			if ctx.Err() != nil {
				return nil
			}
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

// runInteractive delivers each line as it is typed, also while a run goes: the session
// answers commands at once and queues other text by its queue mode.
func (t *Terminal) runInteractive(ctx context.Context, deliver channels.Deliver) error {
	for {
		if !t.busy.Load() {
			t.prompt()
		}
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case <-t.final: // a run ended: prompt again
			continue
		case line, ok = <-t.lines:
			t.lineRead()
		}
		if !ok {
			t.Leave()
			if t.busy.Load() { // Ctrl-D during a run: let it answer first
				select {
				case <-t.final:
				case <-ctx.Done():
					return nil
				}
			}
			t.once.Do(func() { close(t.done) })
			<-ctx.Done()
			return nil
		}
		line, ok = t.check(line)
		if !ok {
			continue
		}
		wasBusy := t.busy.Swap(true)
		if !t.deliver(ctx, deliver, line) {
			t.busy.Store(wasBusy)
			if ctx.Err() != nil {
				return nil
			}
		}
	}
}

// next waits for the next line worth delivering; ok is false at the end of input, stop is
// true when ctx ended.
func (t *Terminal) next(ctx context.Context) (line string, ok, stop bool) {
	for {
		t.prompt()
		select {
		case <-ctx.Done():
			return "", false, true
		case line, ok = <-t.lines:
			t.lineRead()
		}
		if !ok {
			return "", false, false
		}
		if line, ok = t.check(line); ok {
			return line, true, false
		}
	}
}

// check makes line what the gateway accepts: valid UTF-8 without NUL bytes, not blank, not
// longer than MaxLine (refused with a notice).
func (t *Terminal) check(line string) (string, bool) {
	if strings.TrimSpace(line) == "" {
		return "", false
	}
	// Measure as the gateway does, after making the text valid UTF-8 without NUL bytes
	// (an invalid byte becomes a 3-byte U+FFFD).
	line = strings.ReplaceAll(strings.ToValidUTF8(line, "\uFFFD"), "\x00", "")
	if len(line) > t.cfg.MaxLine {
		// Only MaxLine+1 bytes of the line were kept, so its real length is unknown here.
		t.notice("That line is longer than the limit of %s, so it was not sent. Please send it in smaller parts or as a file.",
			size(t.cfg.MaxLine))
		return "", false
	}
	return line, true
}

// deliver hands line to reef; on failure it tells the user and reports false.
func (t *Terminal) deliver(ctx context.Context, deliver channels.Deliver, line string) bool {
	err := deliver(ctx, messages.Inbound{
		ChatID: ChatID, ChatType: messages.ChatDirect, SenderID: SenderID,
		SenderName: t.cfg.UserName, Text: line,
	})
	if err != nil && ctx.Err() == nil {
		t.notice("could not accept the message: %v", err)
	}
	return err == nil
}

// read sends each input line to t.lines and closes it at EOF. Of a line longer than MaxLine
// only MaxLine+1 bytes are kept (enough for Run to refuse it), so input without newlines
// cannot exhaust memory.
func (t *Terminal) read() {
	defer close(t.lines)
	if t.ed != nil {
		t.readEdited()
		return
	}
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

// readEdited reads lines through the line editor until Ctrl-D on an empty line or an error.
func (t *Terminal) readEdited() {
	for {
		line, err := t.ed.ReadLine()
		if err != nil && !errors.Is(err, term.ErrPasteIndicator) {
			return
		}
		t.lines <- line
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
	text := strings.TrimRight(termtext.Text(out.Text), "\n") // the model's words may carry escapes from outside
	if out.Failed {
		text = t.paint(text, colorError)
	}
	if t.cfg.Interactive {
		text = "\n" + text + "\n"
	}
	if err := t.write(t.cfg.Out, text+"\n"); err != nil {
		return nil, fmt.Errorf("terminal: send: %w", err)
	}
	return []string{""}, nil
}

// Progress shows tool activity (interactive mode) and notes the end of each run; a failed
// run is reported on Info in both modes, so a script sees why.
func (t *Terminal) Progress(_ context.Context, ev messages.TurnEvent) {
	switch ev.Kind {
	case messages.TurnStarted:
		t.busy.Store(true)
		t.planMu.Lock()
		t.plan = nil
		t.planMu.Unlock()
	case messages.PlanUpdated:
		for _, line := range t.planChanges(ev.Steps) {
			t.info("%s", t.paint("  "+termtext.Line(line), colorDim))
		}
	case messages.TurnFinal:
		if ev.IsError {
			t.failed.Store(true)
			if !t.cfg.Interactive && ev.Text != "" {
				t.notice("reef: the run failed: %s", termtext.Line(ev.Text))
			}
		}
		t.busy.Store(false)
		select {
		case t.final <- struct{}{}:
		default:
		}
	case messages.MessageQueued:
		t.info("%s", t.paint("  ↳ "+termtext.Line(ev.Label), colorDim))
	case messages.ToolStarted:
		t.info("%s", t.paint("  · "+termtext.Line(ev.Label), colorDim))
	case messages.ToolFinished:
		if ev.IsError && ev.Label != "" {
			t.info("%s", t.paint("  ✗ "+termtext.Line(ev.Label), colorError))
		}
	case messages.TextDelta:
		t.info("%s", strings.TrimSpace(termtext.Text(ev.Text)))
	}
}

// planChanges returns a line for each plan step that is new or changed since the run's last
// plan: "[x] Fetch the files", "[~] Sum them up 40%", "[ ] Write it down", "[!] ...".
func (t *Terminal) planChanges(steps []messages.PlanStep) []string {
	t.planMu.Lock()
	defer t.planMu.Unlock()
	if t.plan == nil {
		t.plan = map[string]string{}
	}
	var out []string
	for _, s := range steps {
		mark := map[string]string{messages.StepRunning: "[~] ", messages.StepDone: "[x] ", messages.StepError: "[!] "}[s.Status]
		if mark == "" {
			mark = "[ ] "
		}
		line := mark + s.Title
		if s.Status == messages.StepRunning && s.Progress > 0 && s.Progress < 100 {
			line += fmt.Sprintf(" %d%%", s.Progress)
		}
		if t.plan[s.ID] != line {
			t.plan[s.ID] = line
			out = append(out, line)
		}
	}
	return out
}

// Notice prints a line of reef's own (not the agent's) to Info in both modes.
func (t *Terminal) Notice(text string) { t.notice("%s", text) }

const promptText = "› "

// ANSI colours (SGR parameters).
const (
	colorPrompt = "1;36" // bold cyan
	colorDim    = "2"
	colorError  = "31" // red
)

// paint colours s when colours are on.
func (t *Terminal) paint(s, sgr string) string {
	if !t.cfg.Color || !t.cfg.Interactive {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// prompt shows the prompt (the line editor shows its own).
func (t *Terminal) prompt() {
	if !t.cfg.Interactive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ed == nil && !t.shown { // a run's end and the loop may both ask: show it once
		fmt.Fprint(t.cfg.Out, t.paint(promptText, colorPrompt))
		t.shown = true
	}
}

// lineRead notes that a line was typed after the prompt: the next one shows again.
func (t *Terminal) lineRead() {
	t.mu.Lock()
	t.shown = false
	t.mu.Unlock()
}

// Leave ends the prompt's line (at Ctrl-D, or when reef chat exits), so the shell's prompt
// starts on a line of its own; from then on output goes straight to Out.
func (t *Terminal) Leave() {
	if !t.cfg.Interactive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.left {
		return
	}
	t.left = true
	if t.ed != nil {
		t.ed = nil
		fmt.Fprint(t.cfg.Out, "\r\x1b[K") // erase the editor's prompt
		return
	}
	fmt.Fprintln(t.cfg.Out)
}

// write prints s to w, or through the line editor (which keeps the line being typed below
// what is printed). The caller holds t.mu.
func (t *Terminal) write(w io.Writer, s string) error {
	t.shown = false
	if t.ed != nil {
		w = t.ed
	}
	_, err := io.WriteString(w, s)
	return err
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
	t.write(t.cfg.Info, fmt.Sprintf(format, args...)+"\n")
}

func (t *Terminal) info(format string, args ...any) {
	if !t.cfg.Interactive {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.write(t.cfg.Info, fmt.Sprintf(format, args...)+"\n")
}
