package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"
)

// The relay carries what a conversation shows while it runs from the node that runs it to
// the nodes holding the people's connections: WebChat's pages, an API request waiting for
// its answer, `reef chat`'s terminal (cmd/reef/cluster_relay.go says what is relayed). It is
// a live feed, not a record: the transcript in the store stays the record, so the relay
// keeps nothing and needs no table.
//
// Transport: PostgreSQL's LISTEN/NOTIFY on a channel of its own (RelayChannel, with the
// store's schema when it is not public, so that clusters sharing a database do not hear each
// other). A node queues messages without waiting (Send); one sender goroutine takes all that
// is queued at once, so a stream of text deltas becomes one notification per round trip
// (adjacent messages merged by RelayOptions.Merge), and sends them in one statement whose
// commit skips the WAL flush (synchronous_commit off: nothing durable is written). A batch
// larger than a notification's payload (under 8000 bytes) is cut into numbered frames sent
// in that same transaction: PostgreSQL delivers a transaction's notifications together and
// in order, and the transactions of one node in commit order, so every listener gets each
// node's messages once and in the order that node queued them. A listener that lost its
// connection misses what was sent meanwhile (RelayStats.Gaps counts what it noticed missing).

// RelayChannel is the NOTIFY channel of the relay (in the public schema).
const RelayChannel = "reef_relay"

// Sizes of the relay.
const (
	relayFrame     = 7600     // bytes of a notification's payload, header included (PostgreSQL: < 8000)
	relayBatchSize = 64 << 10 // bytes of messages encoded into one batch
	relayMaxQueued = 8 << 20  // bytes waiting to be sent; past it new messages are dropped
	relayMaxMsg    = 1 << 20  // bytes of one message's data; a larger one is dropped
	relayDispatch  = 1024     // batches received and not yet handled; past it a batch is dropped
	relayTries     = 3        // sends of a batch before it is dropped
	relayPause     = 200 * time.Millisecond
	relayFlush     = 2 * time.Second // for what is queued when the relay stops
)

// Message is one relayed item: its kind and session say what it is to the receiver, Data
// is the kind's JSON.
type Message struct {
	Kind    string          `json:"k"`
	Session string          `json:"s,omitempty"`
	Data    json.RawMessage `json:"d,omitempty"`
}

// RelayOptions tune a Relay.
type RelayOptions struct {
	// Merge, when set, may fold next into prev, the message queued just before it (a text
	// delta into the previous delta of the same run), and reports whether it did.
	Merge func(prev *Message, next Message) bool
}

// RelayStats count what a Relay did since it started.
type RelayStats struct {
	Sent     uint64 // messages handed to PostgreSQL
	Batches  uint64 // statements sent
	Received uint64 // messages of other nodes handled
	Dropped  uint64 // messages dropped here: the queue full, too large, the database failing
	Gaps     uint64 // batches of another node this node noticed missing (a lost connection)
}

// Relay is one node's end of the relay. Send queues; Run sends and listens until its
// context ends.
type Relay struct {
	pool    *pgxpool.Pool
	node    string
	channel string
	opts    RelayOptions
	log     zerolog.Logger

	mu     sync.Mutex
	queue  []Message
	queued int // bytes in queue
	wake   chan struct{}
	seq    uint64 // of the last batch sent

	listening chan struct{} // closed once the first LISTEN succeeded
	listenOne sync.Once

	sent, batches, received, dropped, gaps atomic.Uint64
}

// NewRelay returns node's relay on the database of pool. It reads the schema (the channel's
// name); nothing is sent or heard before Run.
func NewRelay(ctx context.Context, pool *pgxpool.Pool, node string, opts RelayOptions, log zerolog.Logger) (*Relay, error) {
	var schema string
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return nil, fmt.Errorf("cluster: relay: %w", err)
	}
	return &Relay{pool: pool, node: node, channel: relayChannel(schema), opts: opts,
		log: log.With().Str("part", "relay").Logger(), wake: make(chan struct{}, 1), listening: make(chan struct{})}, nil
}

// relayChannel is the relay's channel for the tables of schema.
func relayChannel(schema string) string {
	name := RelayChannel
	if schema != "" && schema != "public" {
		name += "." + schema
	}
	if len(name) > 63 { // PostgreSQL's identifiers: the rest would be cut, silently
		name = name[:63]
	}
	return name
}

// Send queues m for every other node, without waiting. It reports false when m was dropped:
// too large, or the queue is full (the database slow or away).
func (r *Relay) Send(m Message) bool {
	size := len(m.Data) + len(m.Session) + len(m.Kind)
	r.mu.Lock()
	switch {
	case len(m.Data) > relayMaxMsg, r.queued+size > relayMaxQueued:
		r.mu.Unlock()
		r.dropped.Add(1)
		return false
	case len(r.queue) > 0 && r.opts.Merge != nil && r.opts.Merge(&r.queue[len(r.queue)-1], m):
		r.queued += size
	default:
		r.queue = append(r.queue, m)
		r.queued += size
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return true
}

// Listening is closed once the node listens (the first LISTEN succeeded).
func (r *Relay) Listening() <-chan struct{} { return r.listening }

// Stats returns the counts so far.
func (r *Relay) Stats() RelayStats {
	return RelayStats{Sent: r.sent.Load(), Batches: r.batches.Load(), Received: r.received.Load(),
		Dropped: r.dropped.Load(), Gaps: r.gaps.Load()}
}

// Run sends what is queued and hands every message another node sent to handle (from: that
// node), in order, until ctx ends. handle runs on one goroutine of Run's; it may wait a
// little, but the batches behind it wait too.
func (r *Relay) Run(ctx context.Context, handle func(from string, m Message)) {
	in := make(chan relayBatch, relayDispatch)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.sendLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		r.listen(ctx, in)
	}()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case b := <-in:
			for _, m := range b.msgs {
				r.received.Add(1)
				handle(b.from, m)
			}
		}
	}
}

// sendLoop sends the queue whenever something is in it, all of it at once. When ctx ends
// it sends what is still queued (the last replies of a stopping node), within relayFlush.
func (r *Relay) sendLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
		case <-r.wake:
		}
		if ctx.Err() != nil {
			flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), relayFlush)
			defer cancel()
			if msgs := r.take(); len(msgs) > 0 {
				r.sendNow(flush, msgs)
			}
			return
		}
		if msgs := r.take(); len(msgs) > 0 {
			r.sendNow(ctx, msgs)
		}
	}
}

// take empties the queue and returns what it held.
func (r *Relay) take() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	msgs := r.queue
	r.queue, r.queued = nil, 0
	return msgs
}

// sendNow sends msgs in one statement, trying relayTries times before it drops them.
func (r *Relay) sendNow(ctx context.Context, msgs []Message) {
	frames := r.frames(msgs)
	var err error
	for try := 0; try < relayTries && ctx.Err() == nil; try++ {
		if try > 0 {
			select {
			case <-time.After(time.Duration(try) * relayPause):
			case <-ctx.Done():
			}
		}
		_, err = r.pool.Exec(ctx, `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, f) FROM unnest($2::text[]) AS f`,
			r.channel, frames)
		if err == nil {
			r.sent.Add(uint64(len(msgs)))
			r.batches.Add(1)
			return
		}
	}
	r.dropped.Add(uint64(len(msgs)))
	if ctx.Err() == nil {
		r.log.Warn().Err(err).Int("messages", len(msgs)).Msg("cluster: relay: dropped what could not be sent; the transcript keeps the replies")
	}
}

// frames encodes msgs as batches of about relayBatchSize bytes, each cut into frames that fit a
// notification: "<seq> <i> <n> <node>\n<part>".
func (r *Relay) frames(msgs []Message) []string {
	var out []string
	for len(msgs) > 0 {
		n, size := 0, 0
		for n < len(msgs) && (n == 0 || size+len(msgs[n].Data) < relayBatchSize) {
			size += len(msgs[n].Data) + len(msgs[n].Session) + 16
			n++
		}
		b, _ := json.Marshal(msgs[:n]) // RawMessage data, strings: cannot fail
		msgs = msgs[n:]
		r.seq++
		out = append(out, cutFrames(b, r.seq, r.node)...)
	}
	return out
}

// cutFrames cuts one batch's JSON into frames, each under relayFrame bytes and cut between
// runes (a payload is text).
func cutFrames(b []byte, seq uint64, node string) []string {
	room := relayFrame - len(node) - 64
	var parts []string
	for len(b) > room {
		at := room
		for at > 0 && !utf8.RuneStart(b[at]) {
			at--
		}
		parts = append(parts, string(b[:at]))
		b = b[at:]
	}
	parts = append(parts, string(b))
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf("%d %d %d %s\n%s", seq, i, len(parts), node, p)
	}
	return out
}

// relayBatch is a batch of one node, put together from its frames.
type relayBatch struct {
	from string
	msgs []Message
}

// assembly is what a listener has of another node's batches: the last batch it handled,
// and the frames of the one it is putting together.
type assembly struct {
	seq  uint64 // of the last batch completed
	next int    // the frame expected next; 0: none started
	part uint64 // the batch being put together
	buf  []byte
}

// listen holds a connection that LISTENs, and hands each other node's complete batches to
// out. A lost connection is opened again after a pause.
func (r *Relay) listen(ctx context.Context, out chan<- relayBatch) {
	nodes := map[string]*assembly{}
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := r.listenOnce(ctx, nodes, out)
		if ctx.Err() != nil {
			return
		}
		r.log.Warn().Err(err).Msg("cluster: relay: listening again; what other nodes relayed meanwhile is not shown live")
		for _, a := range nodes {
			a.next, a.buf = 0, nil
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
		}
		pause = min(2*pause, 5*time.Second)
	}
}

func (r *Relay) listenOnce(ctx context.Context, nodes map[string]*assembly, out chan<- relayBatch) error {
	c, err := r.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := c.Hijack() // kept out of the pool: LISTEN belongs to this session
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{r.channel}.Sanitize()); err != nil {
		return err
	}
	r.listenOne.Do(func() { close(r.listening) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if b, ok := r.assemble(nodes, n.Payload); ok {
			select {
			case out <- b:
			default:
				r.dropped.Add(uint64(len(b.msgs)))
				r.log.Warn().Str("from", b.from).Msg("cluster: relay: too much to show; dropped a batch")
			}
		}
	}
}

// assemble adds one frame to its node's batch, and returns the batch once it is complete. A
// node's own frames are skipped; a frame out of order drops the batch it belongs to.
func (r *Relay) assemble(nodes map[string]*assembly, payload string) (relayBatch, bool) {
	head, body, ok := strings.Cut(payload, "\n")
	f := strings.SplitN(head, " ", 4)
	if !ok || len(f) != 4 {
		return relayBatch{}, false
	}
	seq, err1 := strconv.ParseUint(f[0], 10, 64)
	i, err2 := strconv.Atoi(f[1])
	n, err3 := strconv.Atoi(f[2])
	from := f[3]
	if err := errors.Join(err1, err2, err3); err != nil || from == r.node || n < 1 || i < 0 || i >= n {
		return relayBatch{}, false
	}
	a := nodes[from]
	if a == nil {
		a = &assembly{}
		nodes[from] = a
	}
	if i == 0 {
		a.part, a.next, a.buf = seq, 0, a.buf[:0]
	}
	if seq != a.part || i != a.next {
		a.next, a.buf = 0, nil
		return relayBatch{}, false
	}
	a.buf = append(a.buf, body...)
	a.next++
	if a.next < n {
		return relayBatch{}, false
	}
	if a.seq != 0 && seq > a.seq+1 {
		r.gaps.Add(seq - a.seq - 1)
	}
	a.seq, a.next = seq, 0
	var msgs []Message
	if err := json.Unmarshal(a.buf, &msgs); err != nil {
		r.log.Warn().Err(err).Str("from", from).Msg("cluster: relay: a batch that is not JSON")
		return relayBatch{}, false
	}
	return relayBatch{from: from, msgs: msgs}, true
}
