package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/events"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/sessionkey"
)

// Cluster mode's relay (internal/cluster/relay.go, docs/scaling.md): a conversation of
// WebChat, the OpenAI-compatible API or `reef chat` runs on the node that owns its
// partition, while the person's connection (the page's event stream, the API request
// waiting for its answer, the terminal) is held by whichever node the load balancer or the
// command picked. The owner's Connector hands the reply and the run's progress to its
// channel as on one node; the channel here is wrapped (relayedChannel), so they also go to
// the relay, and every other node hands them to its own channel of that name, which shows
// them to the connections it holds (a page of that chat, the request waiting on that chat;
// the others have none and show nothing). The run events of those sessions (the answer's
// text as the model writes it, tool steps) go the same way onto the other nodes' event
// buses, for the pages and streamed API answers that follow them there. A node never shows
// its own relayed messages again, so every connection sees each once, in the order the
// owner produced them. (Ctrl-C in `reef chat` is not relayed: Runtime.Cancel writes a cancel
// entry into the session's inbox, which the owner takes.)

// relayedChannels are the channels whose connections are held by one node.
var relayedChannels = []string{"webchat", "openai", "terminal"}

// Kinds of relayed messages.
const (
	relaySend     = "send"     // Data: relayedOut
	relayProgress = "progress" // Data: relayedProgress
	relayEvent    = "event"    // Data: messages.RunEvent
)

type relayedOut struct {
	Channel string            `json:"channel"`
	Out     messages.Outbound `json:"out"`
}

type relayedProgress struct {
	Channel string             `json:"channel"`
	Event   messages.TurnEvent `json:"event"`
}

// relayGlue connects the relay to this node's channels, event bus and runtime.
type relayGlue struct {
	relay *cluster.Relay
	log   zerolog.Logger
	chans map[string]channels.Channel // the unwrapped channels, by name
	bus   *events.Bus
}

// newRelayGlue prepares the relay of a node in cluster mode.
func newRelayGlue(ctx context.Context, m *clusterMode, node string) (*relayGlue, error) {
	r, err := cluster.NewRelay(ctx, m.store.Pool(), node, cluster.RelayOptions{Merge: mergeDeltas}, m.log)
	if err != nil {
		return nil, err
	}
	return &relayGlue{relay: r, log: m.log, chans: map[string]channels.Channel{}}, nil
}

// wrap returns a copy of chans whose relayed channels are wrapped, and follows the run
// events of their sessions on bus. A relayed channel this node does not have (the terminal
// on a gateway; WebChat and the API in `reef chat`, or with the web listener off) is one
// that only relays: a session of it that runs here sends through its Connector to the node
// holding the connection, instead of waiting in the outbox for want of a Connector.
func (g *relayGlue) wrap(chans map[string]channels.Channel, bus *events.Bus) map[string]channels.Channel {
	out := maps.Clone(chans)
	for _, name := range relayedChannels {
		ch := out[name]
		if ch == nil {
			ch = relayOnly{}
		} else {
			g.chans[name] = ch
		}
		rc := &relayedChannel{Channel: ch, name: name, relay: g.relay}
		if f, ok := ch.(channels.Fetcher); ok {
			out[name] = &relayedFetcher{relayedChannel: rc, fetch: f}
		} else {
			out[name] = rc
		}
	}
	g.bus = bus
	bus.Observe(g.observe)
	return out
}

// relayOnly is a relayed channel of a node without it: it shows nothing here and receives
// nothing.
type relayOnly struct{}

func (relayOnly) Run(ctx context.Context, _ channels.Deliver) error {
	<-ctx.Done()
	return nil
}

func (relayOnly) Send(context.Context, messages.Outbound) ([]string, error) { return []string{""}, nil }

func (relayOnly) Progress(context.Context, messages.TurnEvent) {}

// observe relays a run event of a session a relayed channel may be watching. It runs under
// the bus's lock: Send only queues.
func (g *relayGlue) observe(ev messages.RunEvent) {
	if !relayedSession(ev.Session) || ev.Kind == messages.EventsLost {
		return
	}
	b, err := json.Marshal(ev)
	if err == nil {
		g.relay.Send(cluster.Message{Kind: relayEvent, Session: ev.Session, Data: b})
	}
}

// relayedSession reports whether key is a session of a relayed channel, or one the owner's
// direct chats share whatever their channel (dmScope main or per-peer). A stateless API
// session runs where its request is: nothing to relay.
func relayedSession(key string) bool {
	if key == "" || sessionkey.IsStateless(key) {
		return false
	}
	for _, name := range relayedChannels {
		if strings.Contains(key, ":"+name+":") {
			return true
		}
	}
	rest, _ := strings.CutPrefix(key, "agent:")
	_, rest, _ = strings.Cut(rest, ":") // after the agent: main, or direct:<peer>
	peer, direct := strings.CutPrefix(rest, "direct:")
	return rest == "main" || direct && !strings.Contains(peer, ":")
}

// mergeDeltas folds a text delta into the previous one of the same run.
func mergeDeltas(prev *cluster.Message, next cluster.Message) bool {
	if prev.Kind != relayEvent || next.Kind != relayEvent || prev.Session != next.Session {
		return false
	}
	var a, b messages.RunEvent
	if json.Unmarshal(prev.Data, &a) != nil || json.Unmarshal(next.Data, &b) != nil ||
		a.Kind != messages.RunTextDelta || b.Kind != messages.RunTextDelta || a.Run != b.Run {
		return false
	}
	a.Text += b.Text
	data, err := json.Marshal(a)
	if err != nil {
		return false
	}
	prev.Data = data
	return true
}

// run relays until ctx ends, handing what other nodes relayed to this node's channels and
// bus.
func (g *relayGlue) run(ctx context.Context) {
	g.relay.Run(ctx, func(from string, m cluster.Message) { g.handle(ctx, m) })
}

// relayWait bounds how long a relayed reply waits for the request it belongs to.
const relayWait = 10 * time.Second

func (g *relayGlue) handle(ctx context.Context, m cluster.Message) {
	switch m.Kind {
	case relayEvent:
		var ev messages.RunEvent
		if json.Unmarshal(m.Data, &ev) == nil {
			g.bus.Relayed(ev)
		}
	case relaySend:
		var r relayedOut
		if json.Unmarshal(m.Data, &r) != nil || g.chans[r.Channel] == nil {
			return
		}
		c, cancel := context.WithTimeout(ctx, relayWait)
		defer cancel()
		if _, err := g.chans[r.Channel].Send(c, r.Out); err != nil {
			g.log.Debug().Err(err).Str("session", r.Out.SessionKey).Msg("cluster: relay: a reply not shown here")
		}
	case relayProgress:
		var p relayedProgress
		if json.Unmarshal(m.Data, &p) != nil {
			return
		}
		if pr, ok := g.chans[p.Channel].(channels.ProgressRenderer); ok {
			c, cancel := context.WithTimeout(ctx, relayWait)
			defer cancel()
			pr.Progress(c, p.Event)
		}
	}
}

// relayedChannel is a relayed channel on this node: what its Connector sends goes to the
// channel here and to the relay.
type relayedChannel struct {
	channels.Channel
	name  string
	relay *cluster.Relay
}

var (
	_ channels.ProgressRenderer = (*relayedChannel)(nil)
	_ channels.Fetcher          = (*relayedFetcher)(nil)
)

func (c *relayedChannel) Send(ctx context.Context, out messages.Outbound) ([]string, error) {
	ids, err := c.Channel.Send(ctx, out)
	if err == nil && relayedSession(out.SessionKey) {
		c.send(relaySend, out.SessionKey, relayedOut{Channel: c.name, Out: out})
	}
	return ids, err
}

func (c *relayedChannel) Progress(ctx context.Context, ev messages.TurnEvent) {
	if pr, ok := c.Channel.(channels.ProgressRenderer); ok {
		pr.Progress(ctx, ev)
	}
	if relayedSession(ev.SessionKey) {
		c.send(relayProgress, ev.SessionKey, relayedProgress{Channel: c.name, Event: ev})
	}
}

func (c *relayedChannel) send(kind, session string, v any) {
	if b, err := json.Marshal(v); err == nil {
		c.relay.Send(cluster.Message{Kind: kind, Session: session, Data: b})
	}
}

// relayedFetcher is a relayedChannel whose channel fetches the files people send.
type relayedFetcher struct {
	*relayedChannel
	fetch channels.Fetcher
}

func (c *relayedFetcher) Fetch(ctx context.Context, m messages.Media) (io.ReadCloser, error) {
	return c.fetch.Fetch(ctx, m)
}
