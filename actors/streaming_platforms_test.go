package actors_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/streaming"
)

// streamPlatforms are the platforms whose fakes the streaming tests run against.
var streamPlatforms = []struct {
	name string
	fake func(t *testing.T) *streamFake
}{
	{"telegram", func(t *testing.T) *streamFake { f, _ := telegramFake(t); return f }},
	{"discord", discordFake},
	{"feishu", feishuFake},
}

const streamAnswer = "First line of the answer.\nSecond line of it.\n\nA new paragraph.\nThe last line."

func streamSettings(mode streaming.Mode) streaming.Settings {
	s := streaming.Defaults()
	s.Mode, s.Label, s.MaxLines, s.BlockMinChars = mode, "Working", 3, 30
	return s
}

// visible is the chat's messages not deleted.
func visible(msgs []chatMsg) []chatMsg {
	var out []chatMsg
	for _, m := range msgs {
		if !m.gone {
			out = append(out, m)
		}
	}
	return out
}

// anyShown reports whether some message of the chat showed a text cond takes.
func anyShown(f *streamFake, cond func(string) bool) bool {
	for _, m := range f.chat() {
		if slices.ContainsFunc(m.history, cond) {
			return true
		}
	}
	return false
}

// runStream plays the run with a plan update and three tool calls in mode on f, holding the
// answer's last line until ready holds, and returns the chat once the answer is in.
func runStream(t *testing.T, f *streamFake, mode streaming.Mode, answer string, ready func(string) bool,
	during func(draft chatMsg)) []chatMsg {
	t.Helper()
	hold := make(chan struct{})
	startStreamRig(t, f.name, f.bot, streamSettings(mode), &paced{Provider: fakellm.New(toolsScript(answer)), hold: hold})
	f.connect()
	f.say("collect the files")
	if during != nil {
		until(t, "the draft", func() bool { return len(f.chat()) == 1 })
		during(f.chat()[0])
	}
	if ready != nil {
		until(t, "the draft to show the run", func() bool { return anyShown(f, ready) })
	}
	close(hold)
	until(t, "the answer", func() bool {
		return anyShown(f, func(s string) bool { return strings.Contains(s, "The last line.") || len(s) > 1000 })
	})
	return f.chat()
}

func TestStreamingProgressMode(t *testing.T) {
	for _, p := range streamPlatforms {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := p.fake(t)
			chat := runStream(t, f, streaming.Progress, streamAnswer,
				func(s string) bool { return strings.Contains(s, "read c.txt") }, nil)
			if len(chat) != 1 || chat[0].gone || chat[0].text != streamAnswer {
				t.Fatalf("the chat = %+v, want one message that became the answer", chat)
			}
			h := chat[0].history
			progress := h[:len(h)-1]
			var order []string
			for _, s := range progress {
				if !strings.HasPrefix(s, "Working…") {
					t.Errorf("a progress state without the label: %q", s)
				}
				if n := strings.Count(s, "\n"); n > 3 {
					t.Errorf("a progress state with %d lines, want at most maxLines 3: %q", n, s)
				}
				for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
					if strings.Contains(s, f) && !slices.Contains(order, f) {
						order = append(order, f)
					}
				}
			}
			if !slices.IsSorted(order) || !slices.Contains(order, "c.txt") {
				t.Errorf("tool lines appeared in the order %q, want a.txt, b.txt, c.txt (c.txt at least)", order)
			}
			if !slices.ContainsFunc(progress, func(s string) bool { return strings.Contains(s, "Fetch the files") }) {
				t.Errorf("the plan never showed: %q", progress)
			}
		})
	}
}

func TestStreamingPartialAndBlockModes(t *testing.T) {
	for _, p := range streamPlatforms {
		for _, mode := range []streaming.Mode{streaming.Partial, streaming.Block} {
			t.Run(p.name+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				f := p.fake(t)
				partial := func(s string) bool {
					return s != "…" && len(s) < len(streamAnswer) && strings.HasPrefix(streamAnswer, s)
				}
				chat := runStream(t, f, mode, streamAnswer, partial, nil)
				if len(chat) != 1 || chat[0].gone || chat[0].text != streamAnswer {
					t.Fatalf("the chat = %+v, want one message that became the answer", chat)
				}
				last := ""
				for _, s := range chat[0].history {
					if s == "…" {
						continue
					}
					if !strings.HasPrefix(s, last) || !strings.HasPrefix(streamAnswer, s) {
						t.Errorf("the text did not grow: %q after %q", s, last)
					}
					if strings.Contains(s, "Working") || strings.Contains(s, "read a.txt") {
						t.Errorf("%s mode showed progress lines: %q", mode, s)
					}
					if mode == streaming.Block && s != streamAnswer && !strings.HasSuffix(streamAnswer[:len(s)+2], "\n\n") && len(s) < 30 {
						t.Errorf("block mode showed %q: neither a paragraph nor minChars", s)
					}
					last = s
				}
			})
		}
	}
}

func TestStreamingOffMode(t *testing.T) {
	for _, p := range streamPlatforms {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := p.fake(t)
			chat := runStream(t, f, streaming.Off, streamAnswer, nil, nil)
			if len(chat) != 1 || chat[0].text != streamAnswer {
				t.Fatalf("the chat = %+v, want one message: the answer", chat)
			}
			for _, s := range chat[0].history {
				if s != "…" && s != streamAnswer {
					t.Errorf("off mode showed %q", s)
				}
			}
			if !f.typing() {
				t.Error("no typing indicator while the run went on")
			}
		})
	}
}

// An answer that needs three messages is sent as new messages, and the progress draft is
// taken away; an answer the platform will not let reef edit into the draft is sent anew too.
func TestStreamingFallbacks(t *testing.T) {
	for _, p := range streamPlatforms {
		t.Run(p.name+"/3 chunks", func(t *testing.T) {
			t.Parallel()
			f := p.fake(t)
			para := strings.Repeat("word ", f.limit/5-10)
			long := strings.TrimSpace(para) + "\n\n" + strings.TrimSpace(para) + "\n\n" + strings.TrimSpace(para) + "\nThe last line."
			chat := runStream(t, f, streaming.Progress, long, func(s string) bool { return strings.Contains(s, "read c.txt") }, nil)
			until(t, "the draft taken away and the answer in", func() bool {
				c := f.chat()
				return c[0].gone && strings.HasSuffix(c[len(c)-1].text, "The last line.")
			})
			chat = f.chat()
			if !strings.HasPrefix(chat[0].history[0], "Working…") {
				t.Errorf("the first message %.40q was not the progress draft", chat[0].history[0])
			}
			shown := visible(chat)
			if len(shown) != 3 {
				t.Fatalf("%d messages remain, want the answer in 3", len(shown))
			}
			var got []string
			for _, m := range shown {
				got = append(got, strings.TrimSpace(m.text))
			}
			if j := strings.Join(got, "\n\n"); strings.Join(strings.Fields(j), " ") != strings.Join(strings.Fields(long), " ") {
				t.Errorf("the three messages do not make the answer")
			}
		})
		t.Run(p.name+"/edit refused", func(t *testing.T) {
			t.Parallel()
			f := p.fake(t)
			refused := false
			chat := runStream(t, f, streaming.Progress, streamAnswer,
				func(s string) bool {
					if !refused { // refuse every edit once the draft shows
						if m := f.chat(); len(m) == 1 {
							f.refuse(m[0].id)
							refused = true
						}
					}
					return refused
				}, nil)
			until(t, "the draft taken away", func() bool { return f.chat()[0].gone })
			chat = f.chat()
			shown := visible(chat)
			if len(shown) != 1 || shown[0].text != streamAnswer {
				t.Fatalf("the chat shows %+v, want the answer once, as a new message", shown)
			}
		})
	}
}

// A quick answer shows no draft, whatever the mode: only the answer appears (reef's own
// "…" that the answer is edited into is all that precedes it).
func TestStreamingQuickAnswerShowsNoDraft(t *testing.T) {
	for _, p := range streamPlatforms {
		for _, mode := range streaming.Modes {
			t.Run(fmt.Sprintf("%s/%s", p.name, mode), func(t *testing.T) {
				t.Parallel()
				f := p.fake(t)
				s := streamSettings(mode)
				s.StartDelay = 10 * time.Second // far longer than the quick run, even on a loaded machine
				startStreamRig(t, f.name, f.bot, s, fakellm.New(quickScript()))
				f.connect()
				f.say("hi")
				until(t, "the answer", func() bool { return anyShown(f, func(s string) bool { return s == "Hello!" }) })
				chat := f.chat()
				if len(chat) != 1 {
					t.Fatalf("the chat = %+v, want one message", chat)
				}
				for _, s := range chat[0].history {
					if s != "…" && s != "Hello!" {
						t.Errorf("a quick answer showed %q before it", s)
					}
				}
			})
		}
	}
}

// chopped streams a scripted answer's text in pieces of three bytes (cut inside words and
// UTF-8 sequences, as a model's deltas may be), a little apart; before the piece at holdAt
// it waits for hold, so a test can look at the draft in the middle of a line.
type chopped struct {
	providers.Provider
	holdAt int
	hold   chan struct{}
}

func (c *chopped) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	s, err := c.Provider.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &choppedStream{Stream: s, ctx: ctx, c: c}, nil
}

type choppedStream struct {
	providers.Stream
	ctx  context.Context
	c    *chopped
	rest string // of the text event being chopped
	at   int    // bytes of text streamed so far
}

func (s *choppedStream) Next() (providers.Event, error) {
	if s.rest == "" {
		ev, err := s.Stream.Next()
		if err != nil || ev.Kind != providers.EventText {
			return ev, err
		}
		s.rest = ev.Text
	}
	n := min(3, len(s.rest))
	if s.at < s.c.holdAt && s.at+n >= s.c.holdAt {
		select {
		case <-s.c.hold:
		case <-s.ctx.Done():
			return providers.Event{}, s.ctx.Err()
		}
	}
	select {
	case <-time.After(20 * time.Millisecond):
	case <-s.ctx.Done():
		return providers.Event{}, s.ctx.Err()
	}
	piece := s.rest[:n]
	s.rest, s.at = s.rest[n:], s.at+n
	return providers.Event{Kind: providers.EventText, Text: piece}, nil
}

// In partial mode the draft grows by words, in the middle of a line too (CJK by
// characters), and never shows half a word or half a UTF-8 sequence, on every platform.
func TestStreamingPartialGrowsByWords(t *testing.T) {
	const answer = "Streaming grows by words: 流式输出按字增长 🙂 and never cuts one in half, whatever the pieces.\nThe last line."
	for _, p := range streamPlatforms {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := p.fake(t)
			hold := make(chan struct{})
			model := &chopped{Provider: fakellm.New(toolsScript(answer)), holdAt: strings.Index(answer, "whatever"), hold: hold}
			startStreamRig(t, f.name, f.bot, streamSettings(streaming.Partial), model)
			f.connect()
			f.say("collect the files")
			firstLine, _, _ := strings.Cut(answer, "\n")
			midLine := func(s string) bool { return s != "…" && len(s) < len(firstLine) && strings.HasPrefix(firstLine, s) }
			until(t, "the draft to show part of the first line", func() bool { return anyShown(f, midLine) })
			close(hold)
			until(t, "the answer", func() bool { return anyShown(f, func(s string) bool { return s == answer }) })
			chat := f.chat()
			if len(chat) != 1 || chat[0].gone || chat[0].text != answer {
				t.Fatalf("the chat = %+v, want one message that became the answer", chat)
			}
			for _, s := range chat[0].history {
				if s == "…" || s == answer {
					continue
				}
				if !utf8.ValidString(s) || !strings.HasPrefix(answer, s) {
					t.Errorf("the draft showed %q: not the answer's beginning", s)
					continue
				}
				next, _ := utf8.DecodeRuneInString(answer[len(s):])
				if streaming.WordEnd(s+string(next)) < len(s) {
					t.Errorf("the draft showed %q: it cuts a word", s)
				}
			}
		})
	}
}

// A partial draft caught in the middle of a code block shows it closed, and never a bold or
// code marker whose closing half has not come: on Telegram (the fake keeps the text as the
// user sees it, after the HTML) no stray marker shows, on Discord and Feishu (Markdown kept
// as sent) the markers come in pairs.
func TestStreamingPartialMarkdownIsSafe(t *testing.T) {
	const answer = "Here is **the plan** with `code` in it:\n```go\nfmt.Println(\"hi\")\nx := 1 + 2\n```\nAnd **more bold** at the end."
	for _, p := range streamPlatforms {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := p.fake(t)
			hold := make(chan struct{})
			model := &chopped{Provider: fakellm.New(toolsScript(answer)), holdAt: strings.Index(answer, "+ 2"), hold: hold}
			startStreamRig(t, f.name, f.bot, streamSettings(streaming.Partial), model)
			f.connect()
			f.say("collect the files")
			until(t, "the draft to show the code block", func() bool {
				return anyShown(f, func(s string) bool { return strings.Contains(s, "x :=") })
			})
			close(hold)
			until(t, "the answer", func() bool {
				return anyShown(f, func(s string) bool { return strings.Contains(s, "at the end.") })
			})
			for _, s := range f.chat()[0].history {
				fences, ticks := 0, 0
				for _, l := range strings.Split(s, "\n") {
					if strings.HasPrefix(l, "```") {
						fences++
					} else {
						ticks += strings.Count(l, "`")
					}
				}
				if fences%2 != 0 || ticks%2 != 0 || strings.Count(s, "**")%2 != 0 {
					t.Errorf("the draft showed an unclosed construct: %q", s)
				}
			}
		})
	}
}
