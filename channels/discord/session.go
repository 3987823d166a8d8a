package discord

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
)

// A gateway session can end without reef's say-so: discordgo closes the socket with code 1000
// after a read error or missed heartbeat ACKs, and Discord ends the session of a client that
// closes with 1000 or 1001. The RESUME that follows is refused (op 9), discordgo identifies
// on a new session, and what was dispatched in between is never replayed. So every READY
// after the first is a gap: the bot reads the messages it missed in the channels and DMs it
// has served over REST (those after the last one it saw; the maxBackfillChannels most
// recently active), and queues them before what the new session dispatches. Messages in a channel the bot has not seen since it started are
// not found this way. Dedup in the connector drops what arrives twice.

// maxBackfillPages bounds the history read per channel after a gap (100 messages a page).
const maxBackfillPages = 10

// maxBackfillChannels bounds the channels read after a gap: those with the newest messages.
// New messages wait while the gap is read, so a bot in thousands of channels must not read
// them all.
const maxBackfillChannels = 100

// backfillTimeout bounds the history reads after one gap.
const backfillTimeout = time.Minute

// seen notes the newest message id of each channel the bot was sent a message in.
func (b *Bot) seen(m *discordgo.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if last, ok := b.lastSeen[m.ChannelID]; ok && !newer(m.ID, last) {
		return
	}
	if _, ok := b.lastSeen[m.ChannelID]; !ok && len(b.lastSeen) >= maxCachedChannels {
		return // a bot in more channels than that reads no history after a gap
	}
	b.lastSeen[m.ChannelID] = m.ID
}

// newer reports whether snowflake a is after snowflake b.
func newer(a, b string) bool {
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

// noteGuild remembers the guild of a channel the gateway told a message of ("" for a DM).
func (b *Bot) noteGuild(m *discordgo.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.guildOf[m.ChannelID]; ok || len(b.guildOf) >= maxCachedChannels {
		return
	}
	b.guildOf[m.ChannelID] = m.GuildID
}

// served returns the channels of shard sh the bot has seen messages in, with the newest id
// of each. A channel whose guild the gateway has not told since this process started (read
// from the checkpoint) is shard 0's, so exactly one shard reads its gap.
func (b *Bot) served(sh shard) map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]string, len(b.lastSeen))
	for k, v := range b.lastSeen {
		guild, known := b.guildOf[k]
		if known && shardOf(guild, sh.count) == sh.id || !known && sh.id == 0 {
			out[k] = v
		}
	}
	return out
}

// backfill reads the messages after each channel's last one and hands them to q in order.
// q holds back what the new session dispatches meanwhile, so they come after.
func (b *Bot) backfill(ctx context.Context, q *inbox, last map[string]string) {
	ctx, cancel := context.WithTimeout(ctx, backfillTimeout)
	defer cancel()
	channels := make([]string, 0, len(last))
	for channel := range last {
		channels = append(channels, channel)
	}
	slices.SortFunc(channels, func(x, y string) int { // the most recently active first
		switch {
		case last[x] == last[y]:
			return strings.Compare(x, y)
		case newer(last[x], last[y]):
			return -1
		}
		return 1
	})
	var found []*discordgo.Message
	for _, channel := range channels[:min(len(channels), maxBackfillChannels)] {
		after := last[channel]
		for range maxBackfillPages {
			page, err := call(ctx, b, func(opts ...discordgo.RequestOption) ([]*discordgo.Message, error) {
				return b.rest.ChannelMessages(channel, 100, "", after, "", opts...)
			})
			if err != nil {
				b.log.Warn().Err(b.apiError("read history", err)).Str("channel", channel).
					Msg("discord: cannot read the messages missed while the gateway session was renewed")
				break
			}
			for _, m := range page {
				if m != nil && newer(m.ID, after) {
					found = append(found, m)
				}
			}
			if len(page) < 100 {
				break
			}
			for _, m := range page {
				if m != nil && newer(m.ID, after) {
					after = m.ID
				}
			}
		}
	}
	slices.SortFunc(found, func(x, y *discordgo.Message) int {
		switch {
		case x.ID == y.ID:
			return 0
		case newer(x.ID, y.ID):
			return 1
		}
		return -1
	})
	for _, m := range found {
		b.seen(m)
	}
	if len(found) > 0 {
		b.log.Warn().Int("messages", len(found)).Msg("discord: the gateway session was renewed; read the messages missed meanwhile")
	}
	q.release(found)
}

// readyURL returns READY's resume_gateway_url from the raw event, or "".
func readyURL(e *discordgo.Event) string {
	if e == nil || e.Type != "READY" {
		return ""
	}
	var r struct {
		ResumeGatewayURL string `json:"resume_gateway_url"`
	}
	_ = json.Unmarshal(e.RawData, &r)
	return r.ResumeGatewayURL
}

// resumeTarget redirects the connections of a RESUME to READY's resume_gateway_url, as
// Discord asks: discordgo v0.29.0 (the newest) keeps dialing the gateway it identified on.
// Only the host changes; the path and query stay discordgo's. The redirect applies to the
// gateway's own address, and not at all behind a proxy.
type resumeTarget struct {
	mu      sync.Mutex
	gateway string // host:port of the first gateway connection
	resume  string // host:port of resume_gateway_url, while resuming
	sni     string // its host name, for TLS
	proxied bool
}

func newResumeTarget() *resumeTarget {
	req, _ := http.NewRequest(http.MethodGet, "https://gateway.discord.gg", nil)
	p, _ := http.ProxyFromEnvironment(req)
	return &resumeTarget{proxied: p != nil}
}

// set makes later gateway connections go to rawURL ("" dials the gateway itself).
func (t *resumeTarget) set(rawURL string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resume, t.sni = "", ""
	u, err := url.Parse(rawURL)
	if rawURL == "" || err != nil || u.Hostname() == "" || t.proxied {
		return
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "ws" || u.Scheme == "http" {
			port = "80"
		}
	}
	t.resume, t.sni = net.JoinHostPort(u.Hostname(), port), u.Hostname()
}

// addr returns where a connection to addr should go.
func (t *resumeTarget) addr(addr string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gateway == "" {
		t.gateway = addr
	}
	if t.resume != "" && addr == t.gateway {
		return t.resume
	}
	return addr
}

// serverName is the TLS server name for the next connection ("" for the URL's own).
func (t *resumeTarget) serverName() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sni
}
