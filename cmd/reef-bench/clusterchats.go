//go:build linux

package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/discord/discordtest"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// The chats of the cluster scenario: half on Telegram (the rig's record of sendMessage and
// edits), half in Discord direct messages, whose replies a poller reads from the fake. Each
// chat's messages cycle through five kinds: plain, an ls tool call, a sub-agent delegation,
// plain, a delegation.

// clusterKinds are the kinds of a chat's messages by default, by index modulo 5 (-mix).
var clusterKinds = []string{"plain", "tool", "delegate", "plain", "delegate"}

// clusterText is the text of message i of the mix, with its marker mk.
func clusterText(mix []string, i int, mk string) string {
	switch mix[i%len(mix)] {
	case "tool":
		return benchToolWord + " then answer " + mk
	case "delegate":
		return benchSpawnWord + " then answer " + mk
	}
	return "please answer " + mk
}

// benchTB lets reef-bench drive discordtest's Say, which takes a testing.TB for its wait for
// the bot's session: the rig checks that session first, so Fatalf is a bug of the rig.
type benchTB struct{ testing.TB }

func (benchTB) Helper()                           {}
func (benchTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// discordChats is the Discord half: its messages and the poller that finds their replies.
type discordChats struct {
	dc   *discordtest.Server
	mu   sync.Mutex
	msgs map[string]*benchMsg // marker → message
	wait map[string]string    // marker → channel, for the messages not answered yet
}

func newDiscordChats(dc *discordtest.Server) *discordChats {
	return &discordChats{dc: dc, msgs: map[string]*benchMsg{}, wait: map[string]string{}}
}

// channel is the DM channel of Discord chat c (also its user's id).
func discordChannel(chat int64) string { return strconv.FormatInt(900000000000000000+chat, 10) }

// inject makes chat's user send message i.
func (d *discordChats) inject(chat int64, i int, text string) *benchMsg {
	mk := benchMark(chat, i)
	m := &benchMsg{chat: chat, done: make(chan struct{}), injected: time.Now()}
	ch := discordChannel(chat)
	d.mu.Lock()
	d.msgs[mk], d.wait[mk] = m, ch
	d.mu.Unlock()
	d.dc.Say(benchTB{}, discordtest.Message{ChannelID: ch, AuthorID: ch, Content: text})
	return m
}

// poll looks for the replies of the waiting messages every period until ctx ends.
func (d *discordChats) poll(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d.mu.Lock()
		waiting := map[string][]string{} // channel → markers
		for mk, ch := range d.wait {
			waiting[ch] = append(waiting[ch], mk)
		}
		d.mu.Unlock()
		now := time.Now()
		for ch, marks := range waiting {
			seen := map[string]bool{}
			for _, text := range d.dc.Sent(ch) {
				for _, mk := range benchMarker.FindAllString(text, -1) {
					seen[mk] = true
				}
			}
			d.mu.Lock()
			for _, mk := range marks {
				if seen[mk] {
					m := d.msgs[mk]
					m.replied, m.replies = now, 1
					close(m.done)
					delete(d.wait, mk)
				}
			}
			d.mu.Unlock()
		}
	}
}

// state judges the Discord chats from the fake's full history: lost (no visible message
// carries the marker), dup (more than one does), everDup (a marker ever showed in more than
// one message, deleted or edited away ones included), drafts (visible messages that answer
// nothing), and the latencies of the answered messages.
func (d *discordChats) state() (lost, dup, everDup, drafts int, examples []string, lat []time.Duration) {
	d.mu.Lock()
	byChat := map[int64][]string{}
	for mk, m := range d.msgs {
		byChat[m.chat] = append(byChat[m.chat], mk)
		if m.replies > 0 {
			lat = append(lat, m.replied.Sub(m.injected))
		}
	}
	d.mu.Unlock()
	sortDurations(lat)
	for chat, marks := range byChat {
		visible, ever := map[string]int{}, map[string]int{}
		for _, m := range d.dc.SentMessages(discordChannel(chat)) {
			inHistory := map[string]bool{}
			for _, text := range d.dc.History(m.ID) {
				for _, mk := range benchMarker.FindAllString(text, -1) {
					inHistory[mk] = true
				}
			}
			for mk := range inHistory {
				ever[mk]++
			}
			if m.Deleted {
				continue
			}
			marks := dedupe(benchMarker.FindAllString(m.Content, -1))
			if len(marks) == 0 && m.Content != "ok" {
				drafts++
			}
			for _, mk := range marks {
				visible[mk]++
			}
		}
		sort.Strings(marks)
		for _, mk := range marks {
			switch {
			case visible[mk] == 0:
				lost++
				if len(examples) < 10 {
					examples = append(examples, mk+" unanswered")
				}
			case visible[mk] > 1:
				dup++
				if len(examples) < 10 {
					examples = append(examples, fmt.Sprintf("%s in %d messages", mk, visible[mk]))
				}
			}
			if ever[mk] > 1 {
				everDup++
			}
		}
	}
	return lost, dup, everDup, drafts, examples, lat
}

// checkClusterStore opens the PostgreSQL store after the nodes stopped: no session may hold
// an unanswered message or an unsent reply, and in every transcript each tool call must have
// exactly one result (crash.go's check of bbolt, on the shared database).
func checkClusterStore(ctx context.Context, dbURL string) (sessions int, problems []string) {
	st, err := postgres.Open(ctx, dbURL, postgres.Options{})
	if err != nil {
		return 0, []string{fmt.Sprintf("open the database: %v", err)}
	}
	defer st.Close()
	err = st.View(func(r persistence.Reader) error {
		pending, err := r.PendingSessions()
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			problems = append(problems, fmt.Sprintf("%d sessions hold unanswered messages or unsent replies: %v", len(pending), pending[:min(5, len(pending))]))
		}
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		sessions = len(infos)
		for _, s := range infos {
			entries, err := r.Messages(s.Key, 0)
			if err != nil {
				return err
			}
			if bad := unpairedToolCalls(entries); bad != "" {
				problems = append(problems, fmt.Sprintf("session %s: %s", s.Key, bad))
			}
		}
		return nil
	})
	if err != nil {
		problems = append(problems, fmt.Sprintf("read the database: %v", err))
	}
	return sessions, problems
}
