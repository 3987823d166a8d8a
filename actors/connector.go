package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/streaming"
)

// Connector owns one channel account: the goroutine that runs the platform connection
// (restarted with backoff and jitter when it fails), the durable acceptance of inbound
// messages, and the ordered delivery of replies and progress per chat.
type Connector struct {
	name    string // channels.ID of the account: "telegram", "telegram:work"
	channel string // the platform: telegram
	account string // the account: "" for the platform block's own keys
	ch      channels.Channel
	deps    *Deps
	storage *actor.PID
	router  *actor.PID
	log     zerolog.Logger

	runCtx context.Context
	cancel context.CancelFunc
	sends  sync.WaitGroup      // send and progress goroutines
	queues map[string][]any    // chat id → pending *messages.Outbound / *messages.TurnEvent / *showRun / *typingJob / *messageOp
	busy   map[string]bool     // chat id → a job is running
	runs   map[string]*showRun // session and chat → a started run, to show (see showDelay) and keep shown
	// held are the outbox rows in hand (queued, sending or waiting for the platform), by
	// outKey; true once the Session was told (OutboundSent) before the row was done.
	held    map[string]bool
	done    map[string]time.Time  // outKey → when the Connector was done with it (see recentlyDone)
	retries map[string]*chatRetry // chat → its head reply, refused by the platform before
	health  ChannelHealth
	sentIDs sentLog // the messages sent lately per chat, for the message tool (connector_edit.go)

	self   *actor.PID
	stream streaming.Settings  // how runs show while they go (connector_live.go)
	limits channels.EditLimits // the platform's edit limits, if it has them
	live   map[string]*liveRun // session and chat → a shown run's draft
	pace   *editPacer          // per chat: when the last edit ended
	budget editBudget          // per account: progress edits
	drafts draftBudget         // per account, on a channels.OnceSender: drafts (connector_showbudget.go)

	probe    func() bool   // stops the armed send-side probe (connector_retry.go); nil: none
	wakeRun  chan struct{} // a reply went out: the platform loop reconnects now, not after its backoff
	journal  *draftJournal // notes drafts' ids as their sends return (connector_journal.go); nil: none
	drafting slots         // the draft sends on the wire at once (connector_draft.go)

	// The platform loop, which the owner may pause and restart (connector_control.go).
	loopCancel    context.CancelFunc
	loopGen       uint64         // the newest loop's number
	looping       bool           // that loop runs, or has not reported its end yet
	loopStopped   bool           // that loop was stopped by a pause or restart
	restartWanted bool           // start a new loop once the stopped one has ended
	pauseWaits    []chan<- error // pauses answered once the stopped loop has ended
}

// Self-messages of the Connector.
type (
	runExited struct {
		err     error
		final   bool          // the channel will not be restarted
		retryIn time.Duration // when it is restarted
		gen     uint64        // the loop's number (connector_control.go)
	}
	jobDone struct {
		chat  string
		out   *messages.Outbound // the job's reply, if it was one
		err   error              // why out was not sent
		retry bool               // try out again: the failure may pass
		moved bool               // not sent: out's session moved to another node (Connector.moved)
	}
	inboundHit struct {
		at    time.Time
		chats []string
	}
)

// ConnectorProps is the recipe for the Connector of the channel account name (channels.ID).
func ConnectorProps(name string, ch channels.Channel, deps *Deps, storage, router *actor.PID) *actor.Props {
	log := deps.Log.With().Str("actor", "connector").Str("channel", name).Logger()
	channel, account := channels.SplitID(name)
	return actor.PropsFromProducer(func() actor.Actor {
		return &Connector{name: name, channel: channel, account: account, ch: ch, deps: deps, storage: storage, router: router, log: log}
	}, actor.WithDispatcher(mailboxes), actor.WithReceiverMiddleware(recoverMiddleware(log)))
}

func (c *Connector) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		c.onStarted(ctx)
	case *messages.Outbound:
		c.onOutbound(ctx, msg)
	case *messages.TurnEvent:
		c.onTurnEvent(ctx, msg)
	case *showRun:
		c.onShowDue(ctx, msg)
	case *draftOpened:
		c.onDraftOpened(ctx, msg)
	case *editDue:
		c.onEditDue(ctx, msg)
	case *editDone:
		c.onEditDone(ctx, msg)
	case *jobDone:
		c.onJobDone(ctx, msg)
	case *inboundHit:
		c.health.LastEvent = msg.at
		c.onReachable()
		c.flush(ctx, msg.chats...)
	case *reachable:
		c.onReachable()
		c.flush(ctx)
	case *unreachable:
		c.onUnreachable(msg) // connector_health.go
	case *retryDue:
		c.onRetryDue(ctx, msg)
	case *probeDue:
		c.onProbeDue(ctx)
	case *runExited:
		if !c.staleExit(ctx, msg) { // a paused or restarted loop's (connector_control.go)
			c.onRunExited(msg)
		}
	case *channelControl:
		c.onChannelControl(ctx, msg)
	case *settingsChanged:
		c.onSettingsChanged() // live.go
	case *healthRequest:
		msg.reply <- c.health
	case *reactRequest:
		c.onReact(ctx, msg)
	case *messageOp:
		c.onMessageOp(ctx, msg) // connector_edit.go
	case *actor.Stopping, *actor.Restarting:
		c.onStopping(ctx)
	}
}

func (c *Connector) onStarted(ctx actor.Context) {
	c.queues = map[string][]any{}
	c.busy = map[string]bool{}
	c.runs = map[string]*showRun{}
	c.held = map[string]bool{}
	c.done = map[string]time.Time{}
	c.retries = map[string]*chatRetry{}
	c.live = map[string]*liveRun{}
	c.stream = c.deps.streaming(c.name)
	if p, ok := c.ch.(channels.EditPacer); ok {
		c.limits = p.EditLimits()
	}
	c.pace, c.budget = newEditPacer(c.limits.PerChat), editBudget{rate: c.limits.PerSecond}
	c.self = ctx.Self()
	c.startHealth()
	c.wakeRun = make(chan struct{}, 1)
	c.openJournal()
	c.drafting = make(slots, draftSlots)
	runCtx, cancel := context.WithCancel(context.Background())
	c.runCtx, c.cancel = runCtx, cancel
	self, root := ctx.Self(), ctx.ActorSystem().Root
	if r, ok := c.ch.(channels.Reachable); ok {
		r.OnReachable(func() { root.Send(self, &reachable{}) })
	}
	if u, ok := c.ch.(channels.Unreachable); ok {
		u.OnUnreachable(func(err error, retryIn time.Duration) { root.Send(self, &unreachable{err: err, retryIn: retryIn}) })
	}
	c.startLoop(ctx) // connector_control.go
}

// sendGrace is how long a stopping Connector lets replies in flight finish (and their outbox
// rows be cleared) before it cancels them.
const sendGrace = 5 * time.Second

// onStopping delivers what it can before the platform connection stops: replies in flight
// finish, then the replies still queued behind them go out too (in order per chat), all
// within sendGrace. What does not make it stays in the outbox for the next start.
func (c *Connector) onStopping(ctx actor.Context) {
	if c.cancel == nil {
		return
	}
	c.stopRetries()
	for key, sr := range c.runs {
		sr.stop()
		delete(c.runs, key)
	}
	for _, lr := range c.live {
		c.dropLive(lr.session, lr.chat)
	}
	deadline := time.Now().Add(sendGrace)
	if !waitUntil(&c.sends, deadline) {
		c.log.Warn().Msg("replies still sending at shutdown; they stay in the outbox")
		c.cancel()
		return
	}
	root := ctx.ActorSystem().Root
	for chat, q := range c.queues {
		var outs []*messages.Outbound
		var told []bool // the Session was told already
		for _, job := range q {
			if out, ok := job.(*messages.Outbound); ok {
				outs = append(outs, out)
				told = append(told, out.OutboxSeq != 0 && c.held[outKey(out)])
			}
		}
		delete(c.queues, chat)
		if len(outs) == 0 {
			continue
		}
		c.sends.Add(1)
		go func() {
			defer c.sends.Done()
			for i, out := range outs {
				if time.Now().After(deadline) {
					return
				}
				retry, err := c.send(c.runCtx, root, out)
				if errors.Is(err, errMoved) {
					err = nil
				}
				if !told[i] {
					c.confirm(root, out, err)
				}
				if retry {
					return // the rest of the chat stays in order in the outbox
				}
			}
		}()
	}
	if !waitUntil(&c.sends, deadline) {
		c.log.Warn().Msg("replies still queued at shutdown; they stay in the outbox")
	}
	c.cancel()
	c.journal.close()
}

// waitUntil waits for wg until deadline and reports whether it finished.
func waitUntil(wg *sync.WaitGroup, deadline time.Time) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(time.Until(deadline)):
		return false
	}
}

// runLoop runs the channel until ctx ends or the platform rejects the credentials, restarting
// it after failures with exponential backoff and jitter (1 s doubling to 2 min).
func (c *Connector) runLoop(ctx context.Context, deliver channels.DeliverAll, failed func(err error, retryIn time.Duration)) error {
	backoff := time.Second
	for {
		started := time.Now()
		err := safeRun(ctx, c.ch, deliver)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, channels.ErrAuth) {
			return err
		}
		if errors.Is(err, channels.ErrWorkMoved) { // cluster: another node receives now; wait for our turn
			c.log.Info().Msg("another node of the cluster runs this channel's inbound loop now; sending goes on here")
			continue
		}
		if err == nil {
			err = errors.New("channel stopped unexpectedly")
		}
		if time.Since(started) > 5*time.Minute {
			backoff = time.Second
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		failed(err, wait)
		c.log.Warn().Err(err).Str("retryIn", wait.Round(time.Millisecond).String()).Msg("channel failed; reconnecting")
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
			backoff = min(backoff*2, 2*time.Minute)
		case <-c.wakeRun: // the platform took a reply: it is back
			timer.Stop()
			backoff = time.Second
		}
	}
}

// safeRun runs the channel (by batches if it takes them) and turns a panic into an error.
func safeRun(ctx context.Context, ch channels.Channel, deliver channels.DeliverAll) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("channel panicked: %v\n%s", r, debug.Stack())
		}
	}()
	if b, ok := ch.(channels.BatchRunner); ok {
		return b.RunBatches(ctx, deliver)
	}
	return ch.Run(ctx, deliver.One)
}

// admit enforces the channel's access rules. Messages it refuses are acknowledged and dropped; an
// unknown sender under the pairing policy is sent a pairing code (once while it is pending), or
// told to try later when the channel's pairing queue is full.
func (c *Connector) admit(ctx context.Context, root *actor.RootContext, self *actor.PID, in *messages.Inbound) (bool, error) {
	acc := c.deps.rules(c.name)
	if acc == nil {
		return true, nil
	}
	v, err := acc.Admission(in, func() (ok bool, err error) { // only when the rules do not decide
		err = viewWaiting(c.deps.Store, func(r persistence.Reader) error { // storage_outage.go
			ok, err = access.Approved(r, c.channel, in.SenderID)
			return err
		})
		return ok, err
	})
	if err != nil || v == access.Admit {
		return v == access.Admit, err
	}
	if v == access.Pair {
		code, status, err := c.requestPairing(ctx, root, in)
		if err != nil {
			return false, err
		}
		text := ""
		switch status {
		case access.PairingNew:
			c.log.Info().Str("sender", in.SenderID).Str("code", code).Msg("pairing requested: approve with `reef pairing approve`")
			text = access.PairingNotice(c.channel, code)
		case access.PairingRefused:
			c.log.Warn().Str("sender", in.SenderID).Msg("pairing queue full: sender told to try later")
			text = access.PairingBusyNotice
		}
		if text != "" {
			root.Send(self, &messages.Outbound{Channel: c.channel, Account: c.account, ChatID: in.ChatID,
				ReplyToID: in.MessageID, Text: text})
		}
	}
	return false, nil
}

func (c *Connector) requestPairing(ctx context.Context, root *actor.RootContext, in *messages.Inbound) (string, access.PairingStatus, error) {
	var code string
	var status access.PairingStatus
	now := c.deps.now()
	err := writeAndWait(ctx, root, c.storage, func(tx persistence.Tx) error {
		var err error
		code, status, err = access.RequestPairing(tx, c.channel, in, now)
		return err
	})
	return code, status, err
}

// writeAndWait sends a write to Storage and waits until it is durable.
func writeAndWait(ctx context.Context, root *actor.RootContext, storage *actor.PID, apply func(persistence.Tx) error) error {
	done := make(chan error, 1)
	root.Send(storage, &storeWrite{Apply: apply, Done: func(err error) { done <- err }})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// normalizeText makes inbound text safe to store and send on: valid UTF-8, no NUL bytes.
func normalizeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}
