//go:build linux

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

const crashUsage = `reef-bench crash — SIGKILL and restart a reef gateway under load

Usage:
  reef-bench crash [-reef PATH] [-messages 300] [-chats 100] [-kills 20] [-llm-latency 20ms] [-delegate] [-platform telegram|slack] [-timeout 5m]

Chats talk to the gateway (each message after the previous one was answered; every third one
with a tool call, or with -delegate every one delegated: sessions_spawn then sessions_yield,
and the answer after the sub-agent's completion) while it is SIGKILLed at random moments and
restarted. It exits non-zero unless every message got exactly one reply, no delivered reply
was edited or deleted afterwards, the database passes bbolt's check with nothing pending, and
every tool call in every transcript has exactly one result.

Flags:
`

// runBenchCrash is the crash harness: chats talk to the gateway (each message after the
// previous one was answered; every third one with a tool call) while the gateway is
// SIGKILLed at random moments and restarted. In the end every message must have exactly one
// reply, the database must pass bbolt's check and hold nothing pending, and no transcript
// may hold a tool call without its result.
func runBenchCrash(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("reef-bench crash", flag.ContinueOnError)
	reefPath := reefFlag(flags)
	total := flags.Int("messages", 300, "messages in all")
	chats := flags.Int("chats", 100, "chats sending them")
	kills := flags.Int("kills", 20, "SIGKILLs of the gateway")
	latency := flags.Duration("llm-latency", 20*time.Millisecond, "the most the fake LLM waits before an answer (random up to this)")
	timeout := flags.Duration("timeout", 5*time.Minute, "bound of the whole run")
	platform := flags.String("platform", "telegram", "the platform the chats talk on: telegram | slack (Socket Mode DMs)")
	delegate := flags.Bool("delegate", false, "every message makes the agent spawn a sub-agent and yield; the answer follows its completion")
	if code, done := parseFlags(flags, args, crashUsage, stdout, stderr); done {
		return code
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "reef-bench crash: unexpected argument %q\n", flags.Arg(0))
		return 2
	}
	if *total <= 0 || *chats <= 0 || *kills < 0 {
		fmt.Fprintln(stderr, "reef-bench crash: -messages and -chats must be positive, -kills not negative")
		return 2
	}
	*chats = min(*chats, *total)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	reef, cleanup, err := resolveReef(*reefPath, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "reef-bench crash: %v\n", err)
		return 1
	}
	defer cleanup()
	rig, err := newBenchRig(0, reef, nil)
	if err != nil {
		fmt.Fprintf(stderr, "reef-bench crash: %v\n", err)
		return 1
	}
	defer rig.Close()
	rig.jitter = *latency
	rig.subagents = *delegate
	switch *platform {
	case "telegram":
	case "slack":
		rig.startSlack()
	default:
		fmt.Fprintf(stderr, "reef-bench crash: unknown -platform %q (telegram or slack)\n", *platform)
		return 2
	}
	if err := rig.writeConfig(0, false); err != nil {
		fmt.Fprintf(stderr, "reef-bench crash: %v\n", err)
		return 1
	}
	var cur atomic.Pointer[benchChild]
	child, err := rig.startGateway(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "reef-bench crash: %v\n", err)
		return 1
	}
	cur.Store(child)
	defer func() { cur.Load().kill() }()

	start := time.Now()
	perChat := func(c int) int {
		n := *total / *chats
		if c < *total%*chats {
			n++
		}
		return n
	}
	var answered atomic.Int64
	var wg sync.WaitGroup
	for c := range *chats {
		chat := int64(20000 + c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perChat(c) {
				m := rig.inject(chat, i, (c+i)%3 == 0)
				if waitAll(ctx, []*benchMsg{m}) != nil {
					return
				}
				answered.Add(1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tty := false
	if f, ok := stderr.(*os.File); ok {
		tty = isTerminal(f)
	}
	var killed atomic.Int64
	stopProgress := benchProgress(stderr, tty, func() string {
		return fmt.Sprintf("reef-bench crash: %d/%d answered, %d/%d kills, %.1fs", answered.Load(), *total, killed.Load(), *kills, time.Since(start).Seconds())
	})

	// Kill when a random number of messages were answered, plus a random moment.
	at := make([]int, *kills)
	for i := range at {
		at[i] = *total/20 + rand.N(max(1, *total*85/100))
	}
	sort.Ints(at)
	var failure error
	for _, threshold := range at {
		for answered.Load() < int64(threshold) {
			select {
			case <-done:
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond): // bounded polling of the progress counter
				continue
			}
			break
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case <-time.After(rand.N(30 * time.Millisecond)):
		case <-ctx.Done():
		}
		if err := cur.Load().kill(); err != nil {
			failure = err
			break
		}
		killed.Add(1)
		next, err := rig.startGateway(ctx)
		if err != nil {
			failure = err
			break
		}
		cur.Store(next)
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	elapsed := time.Since(start)
	stopProgress()
	time.Sleep(300 * time.Millisecond) // a moment for duplicates to show
	stopErr := cur.Load().stop()

	var violations []string
	if failure != nil {
		violations = append(violations, failure.Error())
	}
	if stopErr != nil {
		violations = append(violations, stopErr.Error())
	}
	// What the users see in the end decides; a reply that showed for a moment in a second
	// message (a re-delivery after a kill that edited the next run's draft, later replaced
	// by that run's own reply) is reported apart.
	lost, dup, drafts, finalExamples := rig.chatState()
	_, everDup, _ := rig.tally()
	rig.mu.Lock()
	injected := len(rig.msgs)
	rig.mu.Unlock()
	if injected != *total {
		violations = append(violations, fmt.Sprintf("%d of %d messages were injected before the deadline", injected, *total))
	}
	if lost > 0 {
		violations = append(violations, fmt.Sprintf("%d messages have no reply in their chat (lost)", lost))
	}
	var duplicated []string // reported apart: exit status 3 when nothing else is wrong
	if dup > 0 {
		duplicated = append(duplicated, fmt.Sprintf("%d messages have their reply in more than one message of their chat: %v", dup, finalExamples))
	}
	resent, rerun, examples := rig.duplicates(10)
	if rerun > 0 {
		violations = append(violations, fmt.Sprintf("%d messages got two different answers (a run repeated after its reply was sent): %v", rerun, examples))
	}
	rig.mu.Lock()
	stray := rig.stray
	rig.mu.Unlock()
	if stray > 0 {
		violations = append(violations, fmt.Sprintf("%d replies answer no injected message", stray))
	}
	if n, ex := rig.touchedReplies(5); n > 0 {
		violations = append(violations, fmt.Sprintf("%d delivered replies were edited or deleted afterwards: %v", n, ex))
	}
	if int(killed.Load()) != *kills {
		violations = append(violations, fmt.Sprintf("%d kills, want %d", killed.Load(), *kills))
	}
	violations = append(violations, checkCrashDB(filepath.Join(rig.home, "data", "reef.db"))...)

	mode := ""
	if *delegate {
		mode = fmt.Sprintf(", delegated (%d sub-agent runs)", rig.childRuns.Load())
	}
	fmt.Fprintf(stdout, "reef-bench crash: %d messages from %d chats (%d tool calls made%s), %d SIGKILLs, %d model calls, %.1fs\n",
		injected, *chats, rig.toolCalls.Load(), mode, killed.Load(), rig.llmCalls.Load(), elapsed.Seconds())
	fmt.Fprintf(stdout, "  in the chats at the end: lost %d, duplicated %d, stray drafts left showing %d (target: at most %d, one per 10 kills); replies that ever showed in a second message: %d (%d the same answer re-delivered, %d different answers)\n",
		lost, dup, drafts, (*kills+9)/10, everDup, resent, rerun)
	if rig.unasked > 0 {
		fmt.Fprintf(stdout, "  answers to runs no message asked for (a sub-agent's late completion): %d\n", rig.unasked)
	}
	if drafts > 0 {
		fmt.Fprintf(stdout, "  the stray drafts show: %v; chat %d, the bot's messages:\n", rig.strayTexts, rig.strayChat)
		for _, m := range rig.messages(rig.strayChat) {
			fmt.Fprintf(stdout, "    #%d deleted=%v %q\n", m.MessageID, m.Deleted, m.History)
		}
	}
	if len(violations) > 0 {
		for _, v := range violations {
			fmt.Fprintf(stdout, "  VIOLATION: %s\n", v)
		}
	} else {
		fmt.Fprintln(stdout, "  database check passed; nothing pending; every tool call has exactly one result")
	}
	if resent > 0 && dup == 0 {
		// The platform took these replies, then the SIGKILL came before the commit that marks
		// them sent; the next gateway delivered them again into another message (the next
		// run's draft, whose own reply later replaced it), so they showed twice for a while.
		duplicated = append(duplicated, fmt.Sprintf("%d replies showed for a while in a second message (delivered again after a kill): %v", resent, examples))
	}
	for _, d := range duplicated {
		fmt.Fprintf(stdout, "  DUPLICATED: %s\n", d)
	}
	if dup > 0 { // show the first chat with a duplicate as its user sees it
		var chat int64
		fmt.Sscanf(finalExamples[0], "bm-%d-", &chat)
		fmt.Fprintf(stdout, "  chat %d, the bot's messages:\n", chat)
		for _, m := range rig.messages(chat) {
			fmt.Fprintf(stdout, "    #%d edits=%d deleted=%v %q\n", m.MessageID, m.Edits, m.Deleted, m.Text)
		}
	}
	switch {
	case len(violations) > 0:
		fmt.Fprintf(stderr, "gateway log (last lines):\n%s\n", cur.Load().log.tail())
		return 1
	case len(duplicated) > 0:
		return crashExitDuplicated
	}
	fmt.Fprintln(stdout, "  every message has exactly one reply")
	return 0
}

// crashExitDuplicated is the exit status of reef-bench crash when nothing was lost and the
// database is sound, but some replies were duplicated (in the end, or for a while).
const crashExitDuplicated = 3

// checkCrashDB opens the database after the gateway stopped: bbolt's check must pass, no
// session may hold an unanswered message or an unsent reply, and in every transcript each
// assistant tool call must be followed by exactly one result with its id.
func checkCrashDB(path string) []string {
	st, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		return []string{fmt.Sprintf("open the database: %v", err)}
	}
	defer st.Close()
	var out []string
	if err := st.Check(); err != nil {
		out = append(out, fmt.Sprintf("database check: %v", err))
	}
	err = st.View(func(r persistence.Reader) error {
		pending, err := r.PendingSessions()
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			out = append(out, fmt.Sprintf("%d sessions hold unanswered messages or unsent replies: %v", len(pending), pending[:min(5, len(pending))]))
		}
		sessions, err := r.Sessions()
		if err != nil {
			return err
		}
		for _, s := range sessions {
			entries, err := r.Messages(s.Key, 0)
			if err != nil {
				return err
			}
			if bad := unpairedToolCalls(entries); bad != "" {
				out = append(out, fmt.Sprintf("session %s: %s", s.Key, bad))
			}
		}
		return nil
	})
	if err != nil {
		out = append(out, fmt.Sprintf("read the database: %v", err))
	}
	return out
}

// unpairedToolCalls describes the first tool call without exactly one result (results
// follow the assistant entry that made the calls), or returns "".
func unpairedToolCalls(entries []persistence.Entry) string {
	var open map[string]int // call id → results seen, for the last assistant entry with calls
	var openSeq uint64
	closeOpen := func() string {
		for id, n := range open {
			if n != 1 {
				return fmt.Sprintf("tool call %s (entry %d) has %d results", id, openSeq, n)
			}
		}
		open = nil
		return ""
	}
	for _, e := range entries {
		switch {
		case e.Role == messages.RoleTool:
			if _, ok := open[e.ToolCallID]; !ok {
				return fmt.Sprintf("tool result %s (entry %d) answers no open call", e.ToolCallID, e.Seq)
			}
			open[e.ToolCallID]++
		default:
			if bad := closeOpen(); bad != "" {
				return bad
			}
			if e.Role == messages.RoleAssistant && len(e.ToolCalls) > 0 {
				open, openSeq = map[string]int{}, e.Seq
				for _, c := range e.ToolCalls {
					open[c.ID] = 0
				}
			}
		}
	}
	return closeOpen()
}
