package discordtest

import (
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Sharding, as Discord's gateway does it (docs: Gateway → Sharding):
//
//   - GET /gateway/bot recommends Config.Shards shards and reports the session start limit
//     (total, remaining, reset_after, max_concurrency).
//   - An IDENTIFY without a "shard" array, or with fewer shards than recommended, is closed
//     with 4011 (sharding required); a shard id outside [0, count) with 4010 (invalid shard).
//   - Guild events go to the session whose shard owns the guild, (guild_id >> 22) % count;
//     events without a guild (direct messages) go to shard 0 only.
//   - IDENTIFYs are rate limited per bucket, shard_id % max_concurrency: one per bucket per
//     IdentifyWindow (Discord: 5 s). One too many is answered with op 9 (invalid session)
//     and the socket is closed.
//   - Every IDENTIFY spends one session start; with none left, Discord ends every session
//     and resets the token: the fake closes every socket with 4004 and refuses the token
//     from then on.

// DefaultIdentifyWindow is Discord's identify rate limit window per bucket.
const DefaultIdentifyWindow = 5 * time.Second

// shardKey is a session's [shard_id, num_shards].
type shardKey [2]int

// limits holds the sharding state. Guarded by gateway.mu.
type limits struct {
	shards     int
	maxConc    int
	window     time.Duration
	total      int // session starts a day; 0: not counted
	remaining  int
	resetAt    time.Time
	resetAfter time.Duration
	bucketFree map[int]time.Time // rate limit key → when it may identify again
	everShard  map[shardKey]bool // shards that identified at least once
	rateLimits int               // IDENTIFYs refused with op 9
	overlaps   int               // IDENTIFYs of a shard while another live socket had it
}

func (l *limits) init(cfg Config) {
	l.shards = max(cfg.Shards, 1)
	l.maxConc = max(cfg.MaxConcurrency, 1)
	l.window = cfg.IdentifyWindow
	if l.window == 0 && l.shards > 1 {
		l.window = DefaultIdentifyWindow
	}
	l.total, l.remaining, l.resetAfter = cfg.SessionStarts, cfg.SessionStarts, cfg.SessionStartsReset
	if cfg.SessionStartsRemaining > 0 || cfg.SessionStartsReset > 0 {
		l.remaining = cfg.SessionStartsRemaining
	}
	if l.resetAfter <= 0 {
		l.resetAfter = 24 * time.Hour
	}
	l.resetAt = time.Now().Add(l.resetAfter)
	l.bucketFree = map[int]time.Time{}
	l.everShard = map[shardKey]bool{}
}

// refill restores the session starts once the reset time has passed.
func (l *limits) refill(now time.Time) {
	if l.total > 0 && !now.Before(l.resetAt) {
		l.remaining = l.total
		l.resetAt = now.Add(24 * time.Hour)
	}
}

// admit checks an IDENTIFY's shard and limits. It returns a close code (0: admitted), or -1
// when the IDENTIFY is rate limited (op 9). Callers hold g.mu.
func (g *gateway) admit(c *gwConn, shard *[2]int) (shardKey, int) {
	l := &g.lim
	key := shardKey{0, 1}
	if shard != nil {
		key = shardKey(*shard)
	}
	switch {
	case key[1] < 1 || key[0] < 0 || key[0] >= key[1]:
		return key, 4010
	case key[1] < l.shards:
		return key, 4011
	}
	now := time.Now()
	if l.window > 0 {
		bucket := key[0] % l.maxConc
		if now.Before(l.bucketFree[bucket]) {
			l.rateLimits++
			return key, -1
		}
		l.bucketFree[bucket] = now.Add(l.window)
	}
	if l.total > 0 {
		l.refill(now)
		if l.remaining <= 0 {
			return key, 4004
		}
		l.remaining--
	}
	for other := range g.conns {
		if other != c && other.session != nil && other.session.shard == key && other.session.conn == other {
			l.overlaps++
		}
	}
	l.everShard[key] = true
	return key, 0
}

// routes reports whether a session of shard key receives an event of guild ("" for none).
func routes(key shardKey, guild string) bool {
	if guild == "" || key[1] <= 1 {
		return key[0] == 0
	}
	id, err := strconv.ParseUint(guild, 10, 64)
	if err != nil {
		return key[0] == 0
	}
	return int((id>>22)%uint64(key[1])) == key[0]
}

// ShardOf returns the shard of shards that receives guild's events: (guild_id >> 22) %
// shards; 0 for "" (direct messages) and for ids that are not snowflakes.
func ShardOf(guild string, shards int) int {
	for i := range max(shards, 1) {
		if routes(shardKey{i, max(shards, 1)}, guild) {
			return i
		}
	}
	return 0
}

// GuildOnShard returns a snowflake guild id that shard of shards owns, distinct for each n.
func GuildOnShard(shard, shards, n int) string {
	shards = max(shards, 1)
	return strconv.FormatUint(uint64(n*shards+shard)<<22|uint64(n+1), 10)
}

func (s *Server) getGatewayBot(w http.ResponseWriter, _ *http.Request) {
	g := &s.gw
	g.mu.Lock()
	l := &g.lim
	now := time.Now()
	l.refill(now)
	total, remaining, reset := l.total, l.remaining, time.Until(l.resetAt)
	if total == 0 { // not counted: plenty
		total, remaining, reset = 1000, 1000, 0
	}
	body := map[string]any{
		"url":    s.WSURL,
		"shards": l.shards,
		"session_start_limit": map[string]int{"total": total, "remaining": remaining,
			"reset_after": int(max(reset, 0).Milliseconds()), "max_concurrency": l.maxConc},
	}
	g.mu.Unlock()
	writeJSON(w, 200, body)
}

// SetShards makes GET /gateway/bot recommend n shards from now on and closes every session
// identified with fewer with 4011 (sharding required), as Discord does when a bot outgrows
// its shards: the bot must identify again with the new count.
func (s *Server) SetShards(n int) {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lim.shards = max(n, 1)
	for _, sess := range g.sessions {
		if sess.shard[1] < g.lim.shards && sess.conn != nil {
			g.closeWith(sess.conn, 4011, closeText(4011)) // and a RESUME of it gets 4011 too
		}
	}
}

// LiveShards returns the shard ids (of any count) that have a live, identified or resumed
// socket, in order.
func (s *Server) LiveShards() []int {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []int
	for key, sess := range g.active {
		if sess.conn != nil && !slices.Contains(out, key[0]) {
			out = append(out, key[0])
		}
	}
	slices.Sort(out)
	return out
}

// ShardIdentifies returns the [shard_id, num_shards] of every IDENTIFY, in order (nil for
// one without a shard array).
func (s *Server) ShardIdentifies() []*[2]int {
	g := &s.gw
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*[2]int, 0, len(g.identifies))
	for _, id := range g.identifies {
		out = append(out, id.Shard)
	}
	return out
}

// RateLimited returns how many IDENTIFYs were refused (op 9) for coming too fast for their
// max_concurrency bucket.
func (s *Server) RateLimited() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.lim.rateLimits
}

// Overlaps returns how many IDENTIFYs came for a shard that another live socket was running
// (two processes running one shard: both would be told its events).
func (s *Server) Overlaps() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	return s.gw.lim.overlaps
}

// SessionStartsRemaining returns the session starts left before the reset.
func (s *Server) SessionStartsRemaining() int {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	s.gw.lim.refill(time.Now())
	return s.gw.lim.remaining
}

// identifiedFor reports whether a shard that receives guild's events has identified once.
func (s *Server) identifiedFor(guild string) bool {
	s.gw.mu.Lock()
	defer s.gw.mu.Unlock()
	for key := range s.gw.lim.everShard {
		if routes(key, guild) {
			return true
		}
	}
	return false
}

// snowflakeOK reports whether guild can be routed: any id with one shard, a snowflake (or
// none) with several.
func (s *Server) snowflakeOK(guild string) bool {
	s.gw.mu.Lock()
	n := s.gw.lim.shards
	s.gw.mu.Unlock()
	if guild == "" || n <= 1 {
		return true
	}
	_, err := strconv.ParseUint(guild, 10, 64)
	return err == nil
}

// invalidSession answers a rate-limited IDENTIFY: op 9, then the socket is closed. Callers
// hold g.mu.
func (g *gateway) invalidSession(c *gwConn) {
	g.write(c, frame{Op: 9, D: false})
	c.ws.Close()
}
