package actors_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/channels/discord"
	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/testutil"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence/bolt"
	"github.com/reefgw/reef/providers"
	fakellm "github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/streaming"
	"github.com/reefgw/reef/tools"
	"github.com/reefgw/reef/tools/plan"
)

// modelStep is how long each model call and each tool call of the scripted runs takes.
const modelStep = 300 * time.Millisecond

// paced streams a scripted answer's text line by line, modelStep apart, as a model writing
// it; before the last line it waits for hold (when set), so a test can look at the draft
// while the answer is still being written.
type paced struct {
	providers.Provider
	hold chan struct{}
}

func (p *paced) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	s, err := p.Provider.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &pacedStream{Stream: s, ctx: ctx, hold: p.hold}, nil
}

type pacedStream struct {
	providers.Stream
	ctx     context.Context
	hold    chan struct{}
	pending []providers.Event
	rest    []string // lines of the text event being paced
}

func (s *pacedStream) Next() (providers.Event, error) {
	if len(s.rest) == 0 {
		ev, err := s.Stream.Next()
		if err != nil || ev.Kind != providers.EventText {
			return ev, err
		}
		s.rest = strings.SplitAfter(ev.Text, "\n")
	}
	line := s.rest[0]
	s.rest = s.rest[1:]
	last := len(s.rest) == 0
	if last {
		if next, err := s.Stream.Next(); err == nil && next.Kind == providers.EventText {
			s.rest = strings.SplitAfter(next.Text, "\n") // more text: this line was not the last
			last = false
		} else {
			s.pending = append(s.pending, next)
		}
	}
	if last && s.hold != nil {
		select {
		case <-s.hold:
		case <-s.ctx.Done():
			return providers.Event{}, s.ctx.Err()
		}
	}
	select {
	case <-time.After(modelStep):
	case <-s.ctx.Done():
		return providers.Event{}, s.ctx.Err()
	}
	return providers.Event{Kind: providers.EventText, Text: line}, nil
}

// toolsScript is a run with a plan update and three tool calls, each model call taking
// modelStep, and then answer.
func toolsScript(answer string) *fakellm.Script {
	planArgs := map[string]any{"steps": []map[string]any{
		{"id": "fetch", "title": "Fetch the files", "status": "running"},
		{"id": "sum", "title": "Sum them up", "status": "pending"}}}
	return fakellm.NewScript(
		fakellm.Reply{Delay: modelStep, ToolCalls: []messages.ToolCall{call("p1", "update_plan", planArgs)}},
		fakellm.Reply{Delay: modelStep, ToolCalls: []messages.ToolCall{call("t1", "read", map[string]any{"path": "a.txt"})}},
		fakellm.Reply{Delay: modelStep, ToolCalls: []messages.ToolCall{call("t2", "read", map[string]any{"path": "b.txt"})}},
		fakellm.Reply{Delay: modelStep, ToolCalls: []messages.ToolCall{call("t3", "read", map[string]any{"path": "c.txt"})}},
		fakellm.Reply{Delay: modelStep, Text: answer})
}

// slowRead is a "read" tool (a guest may use it) that takes modelStep.
func slowRead() tools.Tool {
	return &testTool{name: "read", run: func(ctx context.Context, c tools.Call) (tools.Result, error) {
		select {
		case <-time.After(modelStep):
			return tools.Result{Content: "read"}, nil
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		}
	}}
}

// startStreamRig starts a gateway with one bot account (name, ch) shown with st, and model.
func startStreamRig(t testing.TB, name string, ch channels.Channel, st streaming.Settings, model providers.Provider) *actors.Runtime {
	t.Helper()
	reg, err := tools.NewRegistry(plan.New(), slowRead())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := tools.NewPolicy(nil, nil, reg.Names())
	if err != nil {
		t.Fatal(err)
	}
	store, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ag := &actors.Agent{ID: "main", Name: "Reef", Workspace: t.TempDir(), Model: "fake/test-model",
		Provider: model, Tools: reg, Policy: policy, ContextWindow: 128000}
	deps := &actors.Deps{Log: testutil.Logger(t), Store: store, Agents: []*actors.Agent{ag},
		Channels: map[string]channels.Channel{name: ch}, Streaming: map[string]streaming.Settings{name: st},
		Retry: actors.OutboxRetry{First: 20 * time.Millisecond, Max: 100 * time.Millisecond, MaxAge: time.Hour}}
	rt, err := actors.Start(deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rt.Stop(10 * time.Second)
		store.Close()
	})
	return rt
}

// chatMsg is a message of the test chat as a platform fake records it.
type chatMsg struct {
	id      string
	text    string   // as it is now
	history []string // every text it showed, as sent, then after each edit
	gone    bool     // deleted or recalled
}

// streamFake is one platform's fake, seen the same way for every platform.
type streamFake struct {
	name    string
	limit   int // characters of one message
	bot     channels.Channel
	say     func(text string)
	chat    func() []chatMsg
	refuse  func(draftID string) // the platform refuses every further edit of the draft
	typing  func() bool          // a typing indicator was sent
	connect func()               // waits until the bot is connected
}

func telegramFake(t testing.TB) (*streamFake, *telegramtest.Server) {
	srv := telegramtest.New(t)
	bot := telegramBot(t, srv)
	return &streamFake{name: "telegram", limit: telegramtest.Limit, bot: bot,
		say: func(text string) { srv.UserSays(42, 42, text) },
		chat: func() []chatMsg {
			var out []chatMsg
			for _, m := range srv.Messages(42) {
				out = append(out, chatMsg{id: strconv.Itoa(m.MessageID), text: m.Text, history: m.History, gone: m.Deleted})
			}
			return out
		},
		refuse:  func(string) { srv.Down(400, "editMessageText") },
		typing:  func() bool { return len(srv.Actions(42)) > 0 },
		connect: func() {},
	}, srv
}

func discordFake(t *testing.T) *streamFake {
	srv := discordtest.New(t, discordtest.Config{})
	bot, err := discord.New(discord.Config{Token: srv.Token(), APIBase: srv.URL}, testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return &streamFake{name: "discord", limit: 2000, bot: bot,
		say: func(text string) { srv.Say(t, discordtest.Message{ChannelID: "dm1", AuthorID: "7", Content: text}) },
		chat: func() []chatMsg {
			var out []chatMsg
			for _, m := range srv.SentMessages("dm1") {
				out = append(out, chatMsg{id: m.ID, text: m.Content, history: srv.History(m.ID), gone: m.Deleted})
			}
			return out
		},
		refuse: func(string) {
			for range 30 {
				srv.FailNext(discordtest.RouteEdit, 404, 0)
			}
		},
		typing:  func() bool { return srv.Typing("dm1") > 0 },
		connect: func() { until(t, "the gateway session", srv.Connected) },
	}
}

func feishuFake(t *testing.T) *streamFake {
	srv := feishutest.New(t, feishutest.Config{EditWindow: time.Hour})
	bot, err := feishu.New(srv.BotConfig(), testutil.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	return &streamFake{name: "feishu", limit: feishu.Limit, bot: bot,
		say: func(text string) { srv.UserSays("oc_dm", "ou_alice", text) },
		chat: func() []chatMsg {
			var out []chatMsg
			for _, m := range srv.Messages() {
				if m.ChatID == "oc_dm" {
					out = append(out, chatMsg{id: m.ID, text: m.Text, history: m.History, gone: m.Recalled})
				}
			}
			return out
		},
		refuse:  func(id string) { srv.SetEdits(id, feishutest.MaxEdits) },
		typing:  func() bool { return true }, // Feishu has no typing indicator
		connect: func() { until(t, "the long connection", srv.Connected) },
	}
}

// quickScript answers at once.
func quickScript() *fakellm.Script { return fakellm.NewScript(fakellm.Reply{Text: "Hello!"}) }
