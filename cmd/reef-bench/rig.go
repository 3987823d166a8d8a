//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/channels/feishu/feishutest"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/providers/fake"
)

// The rig of reef-bench: a fake Telegram Bot API and a fake OpenAI model on loopback, a
// temporary REEF_HOME whose reef.yaml points at them, and `reef gateway` children started
// from the reef binary measured. Every injected message carries a marker ("bm-<chat>-<i>"); the
// fake model answers "reply to <markers>" for the markers of the user messages it answers,
// and the fake Bot API reports each sendMessage, so the rig knows when each message was
// answered, and how often.

// benchToken is the bot token of the fake Bot API.
const benchToken = "123456:AAHbenchTokenForReefBench_012345678"

// benchMarker matches the marker of an injected message.
var benchMarker = regexp.MustCompile(`bm-[0-9]+-[0-9]+`)

// benchAnswer matches the id the fake model gives each of its answers.
var benchAnswer = regexp.MustCompile(`ans-[0-9]+`)

// benchToolWord in a message makes the fake model call the ls tool before it answers.
const benchToolWord = "use-ls"

// benchMsg is one injected message.
type benchMsg struct {
	chat     int64
	injected time.Time
	asked    time.Time           // first model request that carried it
	replied  time.Time           // first reply
	replies  int                 // messages of the bot that carry the marker
	seenIn   map[benchWhere]bool // those messages
	answers  map[string]int      // answer id ("ans-N", one per answer of the model) → messages
	done     chan struct{}       // closed at the first reply
}

// benchRig is the fakes, the home and the record of messages and replies.
type benchRig struct {
	dir, home string
	exe       string // the gateway's executable: reef, or reef-bench for the floor
	command   string // what it runs: "gateway" (when empty) or floorCommand
	tg        *telegramtest.Server
	dc        *discordtest.Server // idle only: Discord's gateway and REST API
	fs        *feishutest.Server  // idle only: Feishu's REST API and long connection
	sl        *slacktest.Server   // -platform slack: the Web API and Socket Mode
	slShown   *slackShown         // -platform slack: what each bot message showed
	llm       *http.Server
	llmStop   chan struct{}
	llmURL    string
	latency   time.Duration
	// sessionIdle, when > 0, is session.idleMinutes of the gateway.
	sessionIdle int
	// queueMode, when set, is session.queue.mode of the gateway.
	queueMode string
	// database, when set, is storage.url of a gateway on PostgreSQL.
	database string
	// streaming, when set, is channels.telegram.streaming.mode of the gateway.
	streaming string
	// toolsPerRun is how many ls calls the model makes, one per answer, for a message with
	// benchToolWord (0: one).
	toolsPerRun int
	// subagents: every message makes the parent spawn one sub-agent and wait for it (subagents.go).
	subagents bool
	jitter    time.Duration // when > 0, a random extra delay up to this per answer
	llmCalls  atomic.Int64
	toolCalls atomic.Int64
	childRuns atomic.Int64 // model calls of sub-agents (the subagents scenario)
	replied   atomic.Int64 // messages with at least one reply

	mu        sync.Mutex
	msgs      map[string]*benchMsg
	order     map[int64][]string // per chat, the markers in the order their replies arrived
	polls     int
	firstPoll time.Time
	stray     int            // replies without a known marker
	asked     map[string]int // marker → answers the model gave about it
	answers   int            // answers the model gave
	calls     map[string]int // Bot API method → calls
	// strayTexts counts the texts of the drafts chatState found left showing.
	strayTexts map[string]int
	strayChat  int64 // the first chat with a stray draft
	// sends is every message the bot sent or edited, per chat, in order (for -trace)
	sends map[int64][]benchSend
	// unasked counts the visible answers ("ok") to runs no injected message asked for (a
	// sub-agent's completion that came after its parent had answered).
	unasked int
}

// newBenchRig starts the fakes and writes a home for the gateway reef (a path); Close undoes it.
// capacity, when not nil, makes the fake model a provider with a concurrency limit (429 with
// Retry-After beyond it).
func newBenchRig(latency time.Duration, reef string, capacity *fake.Capacity) (*benchRig, error) {
	dir, err := os.MkdirTemp("", "reef-bench-")
	if err != nil {
		return nil, err
	}
	r := &benchRig{dir: dir, home: filepath.Join(dir, "home"), latency: latency, exe: reef,
		msgs: map[string]*benchMsg{}, asked: map[string]int{}, calls: map[string]int{}, order: map[int64][]string{}, llmStop: make(chan struct{})}
	if r.tg, err = telegramtest.Start(benchToken); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r.tg.OnCall(r.onCall)
	r.tg.OnSend(r.onSend)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.Close()
		return nil, err
	}
	script := fake.NewScript()
	script.KeepRequests = 1
	script.Respond = r.respond
	script.Capacity = capacity
	r.llm = &http.Server{Handler: fake.OpenAIHandler(script, r.llmStop)}
	r.llmURL = "http://" + ln.Addr().String() + "/v1"
	go r.llm.Serve(ln)
	return r, nil
}

// useFloor makes the rig run the floor gateway (this executable's floorCommand) instead of
// reef gateway.
func (r *benchRig) useFloor() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r.exe, r.command = self, floorCommand
	return nil
}

// Close stops the fakes and removes the temporary directory.
func (r *benchRig) Close() {
	if r.llm != nil {
		close(r.llmStop)
		r.llm.Close()
	}
	if r.tg != nil {
		r.tg.Close()
	}
	if r.dc != nil {
		r.dc.Close()
	}
	if r.fs != nil {
		r.fs.Close()
	}
	if r.sl != nil {
		r.sl.Close()
	}
	os.RemoveAll(r.dir)
}

// Credentials of the fake Discord and Feishu.
const (
	benchDiscordToken = "bench.discord.token"
	benchFeishuApp    = "cli_reefbench"
	benchFeishuSecret = "bench-secret"
)

// discordHeartbeat is the heartbeat interval the fake Discord asks for: Discord's own.
const discordHeartbeat = 41250 * time.Millisecond

// startPlatforms starts a fake Discord (REST and gateway WebSocket) and a fake Feishu (REST
// and long connection), for a gateway with three connected channels.
func (r *benchRig) startPlatforms() {
	r.dc = discordtest.Start(discordtest.Config{Token: benchDiscordToken, HeartbeatInterval: discordHeartbeat})
	r.fs = feishutest.Start(feishutest.Config{AppID: benchFeishuApp, AppSecret: benchFeishuSecret})
}

// writeConfig writes reef.yaml; maxConcurrent > 0 sets llm.maxConcurrent. extraChannels adds
// Discord and Feishu (WebSocket mode), served by the fakes of startPlatforms.
func (r *benchRig) writeConfig(maxConcurrent int, extraChannels bool) error {
	if extraChannels && (r.dc == nil || r.fs == nil) {
		return errors.New("bench: Discord and Feishu configured before their fakes started")
	}
	if err := os.MkdirAll(r.home, 0o700); err != nil {
		return err
	}
	llm := "" // reef's default cap on LLM calls in flight
	idle := ""
	if r.sessionIdle > 0 {
		idle = fmt.Sprintf("  idleMinutes: %d\n", r.sessionIdle)
	}
	if r.queueMode != "" {
		idle += fmt.Sprintf("  queue: {mode: %s}\n", r.queueMode)
	}
	if maxConcurrent > 0 {
		llm = fmt.Sprintf("llm:\n  maxConcurrent: %d\n", maxConcurrent)
	}
	agent, guests := "", ""
	if r.subagents {
		agent, guests = subagentAgentYAML, subagentGuestYAML
	}
	y := fmt.Sprintf(`providers:
  openai:
    type: openai
    baseUrl: %s
    apiKey: sk-reef-bench
agents:
  - id: main
    model: openai/fake
%s%ssession:
  rateLimit: {messages: 0} # the bench is a load generator: its chats send faster than a person
%slog:
  format: json
channels:
  telegram:
    botToken: "%s"
    apiRoot: %s
    dmPolicy: open
    allowFrom: ["*"]
%s`, r.llmURL, agent, llm, idle, benchToken, r.tg.URL, guests)
	if r.streaming != "" {
		y += fmt.Sprintf("    streaming: {mode: %s}\n", r.streaming)
	}
	if extraChannels {
		y += fmt.Sprintf(`  discord:
    token: %q
    apiBase: %s
  feishu:
    appId: %s
    appSecret: %s
    domain: %s
    mode: websocket
`, benchDiscordToken, r.dc.URL, benchFeishuApp, benchFeishuSecret, r.fs.URL)
	}
	if r.sl != nil {
		c := r.sl.Config()
		y += fmt.Sprintf("  slack:\n    botToken: %s\n    appToken: %s\n    apiUrl: %s\n    dmPolicy: open\n    allowFrom: [\"*\"]\n",
			c.BotToken, c.AppToken, r.sl.APIURL)
	}
	if r.database != "" {
		y += fmt.Sprintf("storage:\n  driver: postgres\n  url: %q\n", r.database)
	}
	return os.WriteFile(filepath.Join(r.home, "reef.yaml"), []byte(y), 0o600)
}

func (r *benchRig) onCall(method string) {
	r.mu.Lock()
	r.calls[method]++
	r.mu.Unlock()
	if method != "getUpdates" {
		return
	}
	r.mu.Lock()
	if r.polls == 0 {
		r.firstPoll = time.Now()
	}

	r.polls++
	r.mu.Unlock()
}

// onSend notes the markers a sent or edited message carries. reef delivers a reply by editing
// the draft it sent when the run started ("…"), so a marker first appears in an edit. A
// message counts once per marker however often it is edited; a reply is duplicated when a
// second message carries the marker.
func (r *benchRig) onSend(m telegramtest.SentMessage) {
	now := time.Now()
	marks := benchMarker.FindAllString(m.Text, -1)
	answer := benchAnswer.FindString(m.Text)
	where := benchWhere{m.ChatID, m.MessageID}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sends == nil {
		r.sends = map[int64][]benchSend{}
	}
	r.sends[m.ChatID] = append(r.sends[m.ChatID], benchSend{at: now, id: m.MessageID, edit: m.Edits > 0, text: m.Text})
	if len(marks) == 0 {
		if answer != "" { // an answer to nothing asked; drafts ("…", progress) carry no marker either
			r.stray++
		}
		return
	}
	for _, mk := range marks {
		msg := r.msgs[mk]
		if msg == nil {
			r.stray++
			continue
		}
		if msg.seenIn[where] {
			continue
		}
		if msg.seenIn == nil {
			msg.seenIn, msg.answers = map[benchWhere]bool{}, map[string]int{}
		}
		msg.seenIn[where] = true
		msg.replies++
		msg.answers[answer]++
		if msg.replies == 1 {
			msg.replied = now
			close(msg.done)
			r.replied.Add(1)
		}
		r.order[m.ChatID] = append(r.order[m.ChatID], mk)
	}
}

// benchWhere is a message the bot sent: chat and message id.
type benchWhere struct {
	chat int64
	id   int
}

// inject makes user chat say message i (with the tool word when tool is set) and returns
// its record.
func (r *benchRig) inject(chat int64, i int, tool bool) *benchMsg {
	mk := benchMark(chat, i)
	m := &benchMsg{chat: chat, done: make(chan struct{})}
	text := "please answer " + mk
	switch {
	case r.subagents:
		text = benchSpawnWord + " then answer " + mk
	case tool:
		text = benchToolWord + " then answer " + mk
	}
	r.mu.Lock()
	r.msgs[mk] = m
	m.injected = time.Now()
	r.mu.Unlock()
	if r.sl != nil {
		r.sl.Post(slacktest.UserMessage{Channel: fmt.Sprintf("D%d", chat), ChannelType: "im", User: fmt.Sprintf("U%d", chat), Text: text})
		return m
	}
	r.tg.UserSays(chat, chat, text)
	return m
}

func benchMark(chat int64, i int) string { return fmt.Sprintf("bm-%d-%d", chat, i) }

// pollsSeen returns the number of getUpdates calls and the time of the first.
func (r *benchRig) pollsSeen() (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.polls, r.firstPoll
}

// chatState reads what the users finally see, from the fake Bot API: per injected message,
// how many of the bot's messages (not deleted) carry its marker now. lost counts messages
// whose marker no visible message carries, dup those carried by more than one; drafts counts
// the bot's messages still showing that answer nothing ("…" or a progress draft that no reply
// replaced nor the run's end removed).
func (r *benchRig) chatState() (lost, dup, drafts int, examples []string) {
	r.mu.Lock()
	chats := map[int64]bool{}
	var marks []string
	for mk, m := range r.msgs {
		chats[m.chat] = true
		marks = append(marks, mk)
	}
	r.mu.Unlock()
	visible := map[string]int{}
	for chat := range chats {
		for _, m := range r.messages(chat) {
			if m.Deleted {
				continue
			}
			if m.Text == "ok" { // the model's answer to a run that no message asked for
				r.unasked++
				continue
			}
			if !benchMarker.MatchString(m.Text) {
				drafts++
				if r.strayTexts == nil {
					r.strayTexts = map[string]int{}
				}
				r.strayTexts[m.Text]++
				if r.strayChat == 0 {
					r.strayChat = chat
				}
			}
			for _, mk := range dedupe(benchMarker.FindAllString(m.Text, -1)) {
				visible[mk]++
			}
		}
	}
	sort.Strings(marks)
	for _, mk := range marks {
		switch n := visible[mk]; {
		case n == 0:
			lost++
		case n > 1:
			dup++
			if len(examples) < 10 {
				examples = append(examples, fmt.Sprintf("%s in %d messages", mk, n))
			}
		}
	}
	return lost, dup, drafts, examples
}

// toModel returns, sorted, how long each message took from injection to the first model
// request that carried it: the gateway's intake (poll, store, session, turn, prompt).
func (r *benchRig) toModel() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var d []time.Duration
	for _, m := range r.msgs {
		if !m.asked.IsZero() {
			d = append(d, m.asked.Sub(m.injected))
		}
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d
}

// tally counts, over the messages injected, those without a reply and those with more than
// one, and the latencies (injection to first reply) of the answered ones, sorted.
func (r *benchRig) tally() (lost, dup int, lat []time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		switch {
		case m.replies == 0:
			lost++
			continue
		case m.replies > 1:
			dup++
		}
		lat = append(lat, m.replied.Sub(m.injected))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lost, dup, lat
}

// duplicates splits the messages with more than one reply: a resent one got the same
// answer of the model more than once (a reply re-sent from the outbox: the gateway died
// after the platform took the reply and before its sent-mark was committed); a rerun one got
// two different answers (a run repeated although its reply had been sent). It describes up
// to limit of them.
func (r *benchRig) duplicates(limit int) (resent, rerun int, examples []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var keys []string
	for mk, m := range r.msgs {
		if m.replies > 1 {
			keys = append(keys, mk)
		}
	}
	sort.Strings(keys)
	for _, mk := range keys {
		m := r.msgs[mk]
		if len(m.answers) > 1 {
			rerun++
		} else {
			resent++
		}
		if len(examples) < limit {
			examples = append(examples, fmt.Sprintf("%s sent %d× (%d distinct answers; the model answered it %d×)", mk, m.replies, len(m.answers), r.asked[mk]))
		}
	}
	return resent, rerun, examples
}

// outOfOrder counts the chats whose replies did not arrive in the order of their messages.
func (r *benchRig) outOfOrder() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	bad := 0
	for _, marks := range r.order {
		last := -1
		for _, mk := range marks {
			i, _ := strconv.Atoi(mk[strings.LastIndexByte(mk, '-')+1:])
			if i < last {
				bad++
				break
			}
			last = i
		}
	}
	return bad
}

// waitAll waits until every message in ms has a reply, or ctx ends.
func waitAll(ctx context.Context, ms []*benchMsg) error {
	for _, m := range ms {
		select {
		case <-m.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// percentile returns the q-quantile of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// touchedReplies counts the bot's messages that showed a reply (a marker) and were then edited
// into something else or deleted: what a user already read must stay. It describes up to
// limit of them.
func (r *benchRig) touchedReplies(limit int) (n int, examples []string) {
	r.mu.Lock()
	chats := map[int64]bool{}
	for _, m := range r.msgs {
		chats[m.chat] = true
	}
	r.mu.Unlock()
	for chat := range chats {
		for _, m := range r.messages(chat) {
			first := slices.IndexFunc(m.History, benchMarker.MatchString)
			if first < 0 {
				continue
			}
			what := ""
			for _, later := range m.History[first+1:] {
				if later != m.History[first] {
					what = fmt.Sprintf("edited from %q to %q", m.History[first], later)
					break
				}
			}
			if what == "" && m.DeleteCalls > 0 {
				what = fmt.Sprintf("%q deleted", m.History[first])
			}
			if what == "" {
				continue
			}
			n++
			if len(examples) < limit {
				examples = append(examples, fmt.Sprintf("chat %d message %d: %s", chat, m.MessageID, what))
			}
		}
	}
	return n, examples
}
