package discord

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/reefgw/reef/channels"
)

// Sharding (Discord's docs: Gateway → Sharding). A bot's guilds are split over shards, each
// its own gateway session identified with [shard_id, num_shards]; Discord tells a guild's
// events to shard (guild_id >> 22) % num_shards and events without a guild (direct
// messages) to shard 0 only. Run asks GET /gateway/bot how many shards to run (or takes
// Config.Shards) and runs every shard with its own discordgo session, inbox and delivery
// worker. IDENTIFYs are paced as Discord allows (identifies), and when Discord closes a
// shard with 4011 (sharding required) Run starts over with the count /gateway/bot gives then.
//
// In a cluster each shard is its own unit of work, "channel:discord:<account>:shard:<id>"
// (ShardUnit), so the shards of one bot spread over the nodes: a node whose Gate tells how
// many nodes there are (channels.Spreader) holds at most its share, the shard count divided
// by the nodes and rounded up, and gives the newest shards it took back when it holds more
// (a node joined); a shard whose node died is taken over where there is room.

// identifyEvery is Discord's identify rate limit: one IDENTIFY per rate limit key (shard id
// % max_concurrency) every 5 seconds.
const identifyEvery = 5 * time.Second

// spreadEvery is how often a node in a cluster checks its share of the shards.
const spreadEvery = 2 * time.Second

// errReshard is why a shard stopped when Discord closed it with 4011.
var errReshard = errors.New("sharding required")

// shard is one gateway session's place among the bot's.
type shard struct{ id, count int }

// ShardUnit names the unit of work of one shard of an account's bot in a cluster:
// "channel:discord:default:shard:0".
func ShardUnit(account string, id int) string {
	return channels.InboundWork("discord", account) + ":shard:" + strconv.Itoa(id)
}

// shardOf returns the shard of count that Discord tells guild's events to (0 without a
// guild).
func shardOf(guild string, count int) int {
	id, err := strconv.ParseUint(guild, 10, 64)
	if guild == "" || err != nil || count <= 1 {
		return 0
	}
	return int((id >> 22) % uint64(count))
}

// Run connects every shard to the gateway and delivers each message to reef until ctx ends
// (nil). It returns an error wrapping channels.ErrAuth when Discord rejects the token, the
// intents or the shard count fixed in Config.Shards, and another error when a shard's
// session was lost and could not be resumed (the caller restarts Run). In a cluster
// (Config.Gate) each shard connects only while this node holds its unit (another session
// of a shard would be told its events as well); a node waiting checks the token first, so
// it shows as connected (it sends) and /readyz says ready.
func (b *Bot) Run(ctx context.Context, deliver channels.Deliver) error {
	if b.gate != nil {
		if _, err := b.rest.User("@me", discordgo.WithContext(ctx)); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return b.apiError("get the bot user", err)
		}
		b.reachable()
	}
	b.loadCheckpoint()
	defer func() {
		if err := b.checkpoint.save(); err != nil {
			b.log.Warn().Err(err).Msg("discord: the newest handled message ids were not saved")
		}
	}()
	last := 0 // the shard count Discord closed with 4011
	for {
		count, err := b.shardCount(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if last > 0 && count <= last {
			if b.fixedShards > 0 {
				return b.errorf([]error{channels.ErrAuth}, "discord: gateway closed the connection with 4011: sharding required: "+
					"the bot is in too many guilds for %d shards (channels.discord.shards); set shards: auto", count)
			}
			return b.errorf(nil, "discord: gateway closed the connection with 4011 (sharding required), yet recommends %d shards", count)
		}
		err = b.runShards(ctx, count, deliver)
		if !errors.Is(err, errReshard) {
			return err
		}
		b.log.Warn().Int("shards", count).Msg("discord: Discord asks for more shards (close code 4011); starting again with the count it recommends")
		last = count
	}
}

// loadCheckpoint reads what reef handled before it stopped, at the first Run.
func (b *Bot) loadCheckpoint() {
	if b.checkpoint != nil {
		return
	}
	cp, err := loadCheckpoint(b.stateFile, b.state)
	if err != nil {
		b.log.Warn().Err(err).Msg("discord: messages sent while reef was down are not read")
	}
	b.checkpoint = cp
	cp.mu.Lock()
	defer cp.mu.Unlock()
	b.learn(cp.last, cp.guild)
}

// learn takes the newest handled id of channels as their gap's start, and their guilds.
func (b *Bot) learn(last, guild map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for channel, id := range last {
		if _, ok := b.lastSeen[channel]; ok || len(b.lastSeen) < maxCachedChannels {
			b.lastSeen[channel] = id
		}
	}
	for channel, g := range guild {
		if _, ok := b.guildOf[channel]; !ok && len(b.guildOf) < maxCachedChannels {
			b.guildOf[channel] = g
		}
	}
}

// takeOver, on a cluster node that starts running a shard, reads the shared checkpoint
// again: the shard's gap then starts at the last message any node handled, so what the
// node before received and did not store is read again from the history.
func (b *Bot) takeOver(sh shard) {
	last, guild, err := b.checkpoint.refresh()
	if err != nil {
		b.log.Warn().Err(err).Int("shard", sh.id).Msg("discord: the messages the shard's previous node did not store are not read")
		return
	}
	b.learn(last, guild)
}

// shardCount asks GET /gateway/bot for the recommended shard count and the session start
// limit, and returns Config.Shards when set, else the recommendation.
func (b *Bot) shardCount(ctx context.Context) (int, error) {
	info, err := call(ctx, b, func(opts ...discordgo.RequestOption) (*discordgo.GatewayBotResponse, error) {
		return b.rest.GatewayBot(opts...)
	})
	if err != nil {
		return 0, b.apiError("get gateway/bot", err)
	}
	b.idents.update(info.SessionStartLimit)
	if b.fixedShards > 0 {
		return b.fixedShards, nil
	}
	return max(info.Shards, 1), nil
}

// runShards runs count shards until ctx ends (nil) or one of them fails: then it stops the
// others and returns that error.
func (b *Bot) runShards(ctx context.Context, count int, deliver channels.Deliver) error {
	run, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	sp := newSpread(b.gate, count)
	var wg sync.WaitGroup
	if sp.nodes != nil {
		wg.Go(func() { sp.keep(run, b.spreadEvery, b) })
	}
	for i := range count {
		wg.Go(func() {
			if err := b.shardLoop(run, shard{i, count}, sp, deliver); err != nil {
				stop(err)
			}
		})
	}
	b.log.Info().Int("shards", count).Msg("discord: running the bot's shards")
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return context.Cause(run)
}

// shardLoop runs one shard whenever this node may: at once on one node; in a cluster while
// it holds the shard's unit and no more than its share. It returns nil when ctx ends, and
// the shard's error when it fails.
func (b *Bot) shardLoop(ctx context.Context, sh shard, sp *spread, deliver channels.Deliver) error {
	unit := ShardUnit(b.account, sh.id)
	for {
		if err := sp.wait(ctx); err != nil {
			return nil
		}
		gaveUp := false
		err := channels.Gated(ctx, b.gate, unit, func(held context.Context) error {
			sess, cancel := context.WithCancel(held)
			defer cancel()
			sp.take(sh.id, cancel)
			defer sp.drop(sh.id)
			b.takeOver(sh)
			err := b.runShard(sess, sh, deliver)
			gaveUp = sess.Err() != nil && held.Err() == nil
			return err
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, channels.ErrWorkMoved):
			b.log.Warn().Int("shard", sh.id).Msg("discord: the shard moved to another node of the cluster")
		case err != nil:
			return err
		case gaveUp:
			b.log.Info().Int("shard", sh.id).Msg("discord: gave the shard to another node (this node held more than its share)")
		}
	}
}

// spread keeps a node's share of a bot's shards in a cluster: the count divided by the live
// nodes, rounded up, so that every shard has room somewhere. Without a Spreader gate every
// shard may run here.
type spread struct {
	nodes func(context.Context) (int, error) // nil: no limit
	count int

	mu      sync.Mutex
	share   int
	held    []int                      // the shards held, in the order taken
	stop    map[int]context.CancelFunc // shard → ends its session
	changed chan struct{}              // closed and replaced when share or held change
}

func newSpread(gate channels.Gate, count int) *spread {
	sp := &spread{count: count, share: count, stop: map[int]context.CancelFunc{}, changed: make(chan struct{})}
	if s, ok := gate.(channels.Spreader); ok {
		sp.nodes = s.Nodes
	}
	return sp
}

// wait blocks until this node holds fewer shards than its share, or ctx ends.
func (sp *spread) wait(ctx context.Context) error {
	for {
		sp.mu.Lock()
		room, changed := len(sp.held) < sp.share, sp.changed
		sp.mu.Unlock()
		if room {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (sp *spread) take(id int, stop context.CancelFunc) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.held = append(sp.held, id)
	sp.stop[id] = stop
	sp.signal()
}

func (sp *spread) drop(id int) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for i, h := range sp.held {
		if h == id {
			sp.held = append(sp.held[:i], sp.held[i+1:]...)
			break
		}
	}
	delete(sp.stop, id)
	sp.signal()
}

// signal wakes the waiters. Callers hold sp.mu.
func (sp *spread) signal() {
	close(sp.changed)
	sp.changed = make(chan struct{})
}

// keep recomputes the share every interval until ctx ends, giving up the newest shards
// beyond it.
func (sp *spread) keep(ctx context.Context, every time.Duration, b *Bot) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := sp.nodes(ctx)
		if err != nil && ctx.Err() == nil {
			b.log.Warn().Err(err).Msg("discord: cannot count the cluster's nodes; the shards stay where they are")
		}
		if err == nil {
			sp.rebalance(max(n, 1))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rebalance sets the share for nodes nodes and stops the newest shards beyond it.
func (sp *spread) rebalance(nodes int) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	share := (sp.count + nodes - 1) / nodes
	if share != sp.share {
		sp.share = share
		sp.signal()
	}
	for i := share; i < len(sp.held); i++ {
		sp.stop[sp.held[i]]()
	}
}

// identifies paces a bot's IDENTIFYs as Discord allows: one per rate limit key (shard id %
// max_concurrency) every identifyEvery, and none while the session start limit is spent
// until it resets. Discord answers an IDENTIFY past either limit with an invalid session,
// and ends every session of a bot that runs out of session starts. The interval counts from
// the end of the connection attempt (READY or a failure), after Discord has received the
// IDENTIFY, so a slow dial cannot bring two IDENTIFYs of one key closer than the interval.
type identifies struct {
	mu        sync.Mutex
	every     time.Duration
	maxConc   int
	next      map[int]time.Time // rate limit key → when it may identify again
	busy      map[int]bool      // rate limit key → an IDENTIFY of it is under way
	remaining int               // session starts left; -1: unknown
	resetAt   time.Time
}

// identifyPoll is how often a shard waiting for its key's IDENTIFY under way looks again.
const identifyPoll = 20 * time.Millisecond

func newIdentifies() *identifies {
	return &identifies{every: identifyEvery, maxConc: 1, next: map[int]time.Time{}, busy: map[int]bool{}, remaining: -1}
}

// update takes the session start limit GET /gateway/bot reported.
func (l *identifies) update(lim discordgo.SessionInformation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.maxConc = max(lim.MaxConcurrency, 1)
	l.remaining = lim.Remaining
	if lim.Total == 0 && lim.Remaining == 0 { // not reported
		l.remaining = -1
	}
	l.resetAt = time.Now().Add(time.Duration(lim.ResetAfter) * time.Millisecond)
}

// wait blocks until shard id may IDENTIFY and takes its turn, or ctx ends. done, called
// when the connection attempt ended, starts the key's interval.
func (l *identifies) wait(ctx context.Context, id int, b *Bot) (done func(), err error) {
	warned := false
	for {
		l.mu.Lock()
		now := time.Now()
		if l.remaining == 0 && !now.Before(l.resetAt) {
			l.remaining = -1 // the limit reset
		}
		key := id % l.maxConc
		until, spent := l.next[key], l.remaining == 0
		if spent {
			until = l.resetAt
		}
		if !l.busy[key] && !now.Before(until) {
			l.busy[key] = true
			if l.remaining > 0 {
				l.remaining--
			}
			l.mu.Unlock()
			return func() {
				l.mu.Lock()
				defer l.mu.Unlock()
				l.busy[key] = false
				l.next[key] = time.Now().Add(l.every)
			}, nil
		}
		if l.busy[key] {
			until = now.Add(identifyPoll)
		}
		l.mu.Unlock()
		if spent && !warned {
			b.log.Warn().Time("resetAt", until).Msg("discord: the bot has no gateway session starts left today; waiting for Discord's limit to reset")
			warned = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Until(until)):
		}
	}
}
