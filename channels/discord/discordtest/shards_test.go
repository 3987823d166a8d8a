package discordtest_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/reefgw/reef/channels/discord/discordtest"
)

// client is a bare gateway client: it says HELLO's answer by hand.
type client struct {
	ws *websocket.Conn
}

type payload struct {
	Op int             `json:"op"`
	T  string          `json:"t"`
	D  json.RawMessage `json:"d"`
}

func dial(t *testing.T, srv *discordtest.Server) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(srv.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	c := &client{ws: ws}
	if p, err := c.read(); err != nil || p.Op != 10 {
		t.Fatalf("first frame %+v, %v; want HELLO", p, err)
	}
	return c
}

func (c *client) read() (payload, error) {
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	var p payload
	_, data, err := c.ws.ReadMessage()
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(data, &p)
}

func (c *client) identify(t *testing.T, srv *discordtest.Server, shard []int) {
	t.Helper()
	d := map[string]any{"token": "Bot " + srv.Token(), "intents": discordtest.IntentGuildMessages | discordtest.IntentDirectMessages}
	if shard != nil {
		d["shard"] = shard
	}
	if err := c.ws.WriteJSON(map[string]any{"op": 2, "d": d}); err != nil {
		t.Fatal(err)
	}
}

// closeCode reads until the socket closes and returns the close code (0 without one).
func (c *client) closeCode(t *testing.T) int {
	t.Helper()
	for {
		_, err := c.read()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		return 0
	}
}

// ready identifies and waits for READY.
func (c *client) ready(t *testing.T, srv *discordtest.Server, shard []int) {
	t.Helper()
	c.identify(t, srv, shard)
	p, err := c.read()
	if err != nil || p.T != "READY" {
		t.Fatalf("shard %v: got %+v, %v; want READY", shard, p, err)
	}
}

// messages returns the contents of the MESSAGE_CREATEs that reach c within a short while.
func (c *client) messages() []string {
	var out []string
	for {
		c.ws.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return out
		}
		var p payload
		_ = json.Unmarshal(data, &p)
		if p.T == "MESSAGE_CREATE" {
			var m struct {
				Content string `json:"content"`
			}
			_ = json.Unmarshal(p.D, &m)
			out = append(out, m.Content)
		}
	}
}

func TestFakeRefusesWrongSharding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		shards int
		shard  []int
		want   int
	}{
		{"no shard array when sharding is required", 2, nil, 4011},
		{"fewer shards than required", 3, []int{0, 2}, 4011},
		{"shard id past the count", 2, []int{2, 2}, 4010},
		{"negative shard id", 2, []int{-1, 2}, 4010},
		{"zero shards", 1, []int{0, 0}, 4010},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := discordtest.New(t, discordtest.Config{Shards: tt.shards, IdentifyWindow: -1})
			c := dial(t, srv)
			c.identify(t, srv, tt.shard)
			if got := c.closeCode(t); got != tt.want {
				t.Errorf("close code %d, want %d", got, tt.want)
			}
		})
	}
	t.Run("more shards than recommended", func(t *testing.T) {
		t.Parallel()
		srv := discordtest.New(t, discordtest.Config{Shards: 2, IdentifyWindow: -1})
		dial(t, srv).ready(t, srv, []int{3, 4})
	})
}

type gatewayBot struct {
	URL    string `json:"url"`
	Shards int    `json:"shards"`
	Limit  struct {
		Total          int `json:"total"`
		Remaining      int `json:"remaining"`
		ResetAfter     int `json:"reset_after"`
		MaxConcurrency int `json:"max_concurrency"`
	} `json:"session_start_limit"`
}

func TestFakeGatewayBotReportsShardsAndLimits(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 3, MaxConcurrency: 2, SessionStarts: 10,
		SessionStartsRemaining: 4, SessionStartsReset: time.Hour, IdentifyWindow: -1})
	get := func() gatewayBot {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v9/gateway/bot", nil)
		req.Header.Set("Authorization", "Bot "+srv.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got gatewayBot
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := get()
	if got.URL != srv.WSURL || got.Shards != 3 || got.Limit.Total != 10 || got.Limit.Remaining != 4 ||
		got.Limit.MaxConcurrency != 2 || got.Limit.ResetAfter <= 0 || got.Limit.ResetAfter > 3600_000 {
		t.Fatalf("/gateway/bot = %+v", got)
	}
	dial(t, srv).ready(t, srv, []int{0, 3})
	if got := get(); got.Limit.Remaining != 3 {
		t.Errorf("after one IDENTIFY remaining = %d, want 3", got.Limit.Remaining)
	}
}

func TestFakeRoutesEventsToTheirShard(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 2, IdentifyWindow: -1})
	shard0, shard1 := dial(t, srv), dial(t, srv)
	shard0.ready(t, srv, []int{0, 2})
	shard1.ready(t, srv, []int{1, 2})
	g0, g1 := discordtest.GuildOnShard(0, 2, 1), discordtest.GuildOnShard(1, 2, 1)
	if discordtest.ShardOf(g0, 2) != 0 || discordtest.ShardOf(g1, 2) != 1 {
		t.Fatalf("GuildOnShard: %s on %d, %s on %d", g0, discordtest.ShardOf(g0, 2), g1, discordtest.ShardOf(g1, 2))
	}
	srv.GuildMessage(t, g0, "c0", "8", "to shard 0")
	srv.GuildMessage(t, g1, "c1", "8", "to shard 1")
	srv.UserSays(t, "dm1", "8", "a DM")
	if got := shard0.messages(); len(got) != 2 || got[0] != "to shard 0" || got[1] != "a DM" {
		t.Errorf("shard 0 got %q; want its guild's message and the DM", got)
	}
	if got := shard1.messages(); len(got) != 1 || got[0] != "to shard 1" {
		t.Errorf("shard 1 got %q; want only its guild's message", got)
	}
}

func TestFakeRateLimitsIdentifiesPerBucket(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 4, MaxConcurrency: 2, IdentifyWindow: time.Hour})
	// Shards 0 and 1 are in different buckets: both may start at once.
	dial(t, srv).ready(t, srv, []int{0, 4})
	dial(t, srv).ready(t, srv, []int{1, 4})
	// Shard 2 shares bucket 0 with shard 0: op 9, then the socket closes.
	c := dial(t, srv)
	c.identify(t, srv, []int{2, 4})
	p, err := c.read()
	if err != nil || p.Op != 9 {
		t.Fatalf("third IDENTIFY in the window got %+v, %v; want op 9 (invalid session)", p, err)
	}
	if _, err := c.read(); err == nil {
		t.Error("the socket stays open after a rate-limited IDENTIFY")
	}
	if srv.RateLimited() != 1 {
		t.Errorf("RateLimited = %d, want 1", srv.RateLimited())
	}
}

func TestFakeIdentifyWindowPasses(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 2, IdentifyWindow: 200 * time.Millisecond})
	dial(t, srv).ready(t, srv, []int{0, 2})
	time.Sleep(250 * time.Millisecond) // the window, not a wait for an event
	dial(t, srv).ready(t, srv, []int{1, 2})
	if srv.RateLimited() != 0 {
		t.Errorf("RateLimited = %d after the window passed, want 0", srv.RateLimited())
	}
}

func TestFakeOutOfSessionStartsEndsEverySession(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{SessionStarts: 1, IdentifyWindow: -1})
	first := dial(t, srv)
	first.ready(t, srv, nil)
	second := dial(t, srv)
	second.identify(t, srv, nil)
	if got := second.closeCode(t); got != 4004 {
		t.Errorf("IDENTIFY past the limit closed with %d, want 4004", got)
	}
	if got := first.closeCode(t); got != 4004 {
		t.Errorf("the live session closed with %d, want 4004 (Discord resets the token)", got)
	}
}

func TestFakeSetShardsClosesOutgrownSessions(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 2, IdentifyWindow: -1})
	c := dial(t, srv)
	c.ready(t, srv, []int{0, 2})
	srv.SetShards(3)
	if got := c.closeCode(t); got != 4011 {
		t.Errorf("a session of 2 shards after SetShards(3) closed with %d, want 4011", got)
	}
	d := dial(t, srv)
	d.identify(t, srv, []int{0, 2})
	if got := d.closeCode(t); got != 4011 {
		t.Errorf("IDENTIFY with the old count closed with %d, want 4011", got)
	}
	dial(t, srv).ready(t, srv, []int{0, 3})
}

func TestFakeCountsOverlappingShards(t *testing.T) {
	t.Parallel()
	srv := discordtest.New(t, discordtest.Config{Shards: 2, IdentifyWindow: -1})
	dial(t, srv).ready(t, srv, []int{1, 2})
	if srv.Overlaps() != 0 {
		t.Fatalf("Overlaps = %d with one session", srv.Overlaps())
	}
	dial(t, srv).ready(t, srv, []int{1, 2})
	if srv.Overlaps() != 1 {
		t.Errorf("Overlaps = %d with two live sockets on shard 1, want 1", srv.Overlaps())
	}
	if got := srv.LiveShards(); len(got) != 1 || got[0] != 1 {
		t.Errorf("LiveShards = %v, want [1]", got)
	}
}
