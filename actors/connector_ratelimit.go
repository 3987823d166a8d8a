package actors

import (
	"sync"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/messages"
)

// rateNotice is what a sender over the rate limit is told, at most once per rateNoticeEvery.
const rateNotice = "You're sending messages faster than I can take them; I skipped some. Please wait a moment."

const rateNoticeEvery = time.Minute

// rateLimiter is a token bucket per sender of one channel: a sender may send burst messages
// in a row and earns them back evenly over per. The channel calls deliver from its own
// goroutines (a webhook server may call it from several at once), hence the mutex. Buckets
// that refilled are dropped, so memory follows the senders active in the last minutes.
type rateLimiter struct {
	mu      sync.Mutex
	burst   float64
	per     time.Duration
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens  float64
	at      time.Time // when tokens was last brought up to date
	noticed time.Time // when the sender was last told (zero: never)
}

// newRateLimiter returns the limiter for channel, or nil (no limit) when the limit is off or
// the channel is the terminal, WebChat or the API (their user is the owner: at the keyboard,
// or holding the gateway token).
func newRateLimiter(channel string, l RateLimit) *rateLimiter {
	if l.Messages <= 0 || channel == "terminal" || channel == "webchat" || channel == access.APIChannel {
		return nil
	}
	if l.Per <= 0 {
		l.Per = time.Minute
	}
	return &rateLimiter{burst: float64(l.Messages), per: l.Per, buckets: map[string]*bucket{}}
}

// take spends one of the sender's tokens and reports whether there was one.
func (l *rateLimiter) take(sender string, now time.Time) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[sender]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[sender] = b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(l.burst, b.tokens+l.burst*d.Seconds()/l.per.Seconds())
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// refund gives back the token take spent on a message that was not accepted after all (a
// redelivery, or a failed write the platform will deliver again).
func (l *rateLimiter) refund(sender string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.buckets[sender]; b != nil {
		b.tokens = min(l.burst, b.tokens+1)
	}
}

// notify reports whether a limited sender should be told now (at most once per rateNoticeEvery).
func (l *rateLimiter) notify(sender string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[sender]
	if b == nil || !b.noticed.IsZero() && now.Sub(b.noticed) < rateNoticeEvery {
		return false
	}
	b.noticed = now
	return true
}

// sweep drops the buckets that are full again and whose notice is over a minute old: they
// are the same as a new bucket. It looks at the map at most once per l.per.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < l.per {
		return
	}
	l.swept = now
	for k, b := range l.buckets {
		if now.Sub(b.at) >= l.per && now.Sub(b.noticed) >= rateNoticeEvery {
			delete(l.buckets, k)
		}
	}
}

// size returns how many buckets the limiter holds.
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// rateKey names the sender a bucket belongs to (per channel: each Connector has its own limiter).
func rateKey(in *messages.Inbound) string {
	sender := in.SenderID
	if sender == "" {
		sender = "chat:" + in.ChatID
	}
	return in.Account + "\x00" + sender
}
