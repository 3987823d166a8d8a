package web

import (
	"container/list"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Login rate limit: wrong gateway tokens (the login form, a Bearer header) are counted per
// client address. After limitFailures of them within limitWindow the address is locked out
// for limitLockout; while locked, every attempt from it that presents a token is answered
// 429 with Retry-After before the token is even compared (else the answer would still tell a
// right guess from a wrong one). A wrong token right after a lockout ends locks the address
// again at once, for twice as long, up to limitMaxLockout: a guesser gets five tries, then
// one per 1, 2, 4... minutes, then one an hour. A right token clears the address's record.
//
// The address is the connection's: the listener has no trusted-proxy setting, so
// X-Forwarded-For is never read (a client could write any address there). Behind a reverse
// proxy every client shares the proxy's address, and one guesser's lockout is everyone's;
// a browser already logged in keeps working (its cookie is not counted, see protect).
// IPv6 clients are counted per /64, the block one host usually holds.
//
// Memory is bounded: at most limitMaxAddrs addresses are tracked, least recently failed
// first out; a record with no failure for limitForget is dropped.
const (
	limitFailures   = 5
	limitWindow     = 10 * time.Minute
	limitLockout    = time.Minute
	limitMaxLockout = time.Hour
	limitForget     = 2 * time.Hour
	limitMaxAddrs   = 10000
)

// limiter counts failed logins per client address. Safe for concurrent use.
type limiter struct {
	now      func() time.Time // a fake clock in tests
	failures int              // wrong tokens within window that lock an address out
	window   time.Duration
	lockout  time.Duration // the first lockout; each next one doubles, up to maxLock
	maxLock  time.Duration
	forget   time.Duration
	maxAddrs int

	mu    sync.Mutex
	addrs map[netip.Addr]*list.Element // of *strikes
	order *list.List                   // least recently failed at the front
}

// strikes is one address's record.
type strikes struct {
	addr     netip.Addr
	count    int       // wrong tokens since first
	first    time.Time // the window's start
	last     time.Time // the latest wrong token
	until    time.Time // locked out until then
	lockouts int       // lockouts so far: the next one lasts lockout << lockouts
}

func newLimiter() *limiter {
	return &limiter{now: time.Now, failures: limitFailures, window: limitWindow, lockout: limitLockout,
		maxLock: limitMaxLockout, forget: limitForget, maxAddrs: limitMaxAddrs,
		addrs: map[netip.Addr]*list.Element{}, order: list.New()}
}

// clientAddr is the key remoteAddr (host:port, as in http.Request.RemoteAddr) is counted
// under: the IP, or its /64 for IPv6. ok is false when remoteAddr holds no IP.
func clientAddr(remoteAddr string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr(), true
	}
	return ip, true
}

// locked reports how long addr is still locked out (0: it may try).
func (l *limiter) locked(addr netip.Addr) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.addrs[addr]
	if !ok {
		return 0
	}
	if d := el.Value.(*strikes).until.Sub(l.now()); d > 0 {
		return d
	}
	return 0
}

// fail counts a wrong token from addr. lockout is how long addr is now locked out for when
// this failure locked it (0 when it did not), so the caller logs once per lockout.
func (l *limiter) fail(addr netip.Addr) (lockout time.Duration, count int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.prune(now)
	var s *strikes
	if el, ok := l.addrs[addr]; ok {
		s = el.Value.(*strikes)
		l.order.MoveToBack(el)
	} else {
		for l.order.Len() >= l.maxAddrs {
			l.drop(l.order.Front())
		}
		s = &strikes{addr: addr, first: now}
		l.addrs[addr] = l.order.PushBack(s)
	}
	if now.Before(s.until) { // a race with locked: already locked out, nothing more to count
		return 0, s.count
	}
	if s.lockouts == 0 && now.Sub(s.first) > l.window { // the window passed: count afresh
		s.count, s.first = 0, now
	}
	s.count++
	s.last = now
	if s.count < l.failures && s.lockouts == 0 {
		return 0, s.count
	}
	d := l.lockout << min(s.lockouts, 30)
	if d > l.maxLock || d <= 0 {
		d = l.maxLock
	}
	s.lockouts++
	s.until = now.Add(d)
	return d, s.count
}

// succeed forgets addr's failures: the right token was given.
func (l *limiter) succeed(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.addrs[addr]; ok {
		l.drop(el)
	}
}

// prune drops the records whose last failure is older than forget and whose lockout ended.
// The list is in order of the last failure, so it stops at the first one still fresh.
func (l *limiter) prune(now time.Time) {
	for el := l.order.Front(); el != nil; el = l.order.Front() {
		s := el.Value.(*strikes)
		if now.Sub(s.last) < l.forget || now.Before(s.until) {
			return
		}
		l.drop(el)
	}
}

func (l *limiter) drop(el *list.Element) {
	delete(l.addrs, el.Value.(*strikes).addr)
	l.order.Remove(el)
}

// tracked is how many addresses are held (for tests).
func (l *limiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}

// lockedOut answers 429 with Retry-After when r's address is locked out, and reports
// whether it did. form: the login form's page (else a JSON error).
func (s *Server) lockedOut(w http.ResponseWriter, r *http.Request, form bool) bool {
	addr, ok := clientAddr(r.RemoteAddr)
	if !ok {
		return false
	}
	d := s.limit.locked(addr)
	if d <= 0 {
		return false
	}
	secs := int((d + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("Too many wrong tokens from your address: try again in %s.", waitText(secs))
	if form {
		w.WriteHeader(http.StatusTooManyRequests)
		s.renderLogin(w, r, msg)
		return true
	}
	jsonError(w, http.StatusTooManyRequests, msg)
	return true
}

// counted tells the limiter how r's token check went, and logs a lockout once, when it
// starts (the address and the count, never what was tried).
func (s *Server) counted(r *http.Request, ok bool) {
	addr, valid := clientAddr(r.RemoteAddr)
	if !valid {
		return
	}
	if ok {
		s.limit.succeed(addr)
		return
	}
	if d, n := s.limit.fail(addr); d > 0 {
		s.log.Warn().Str("remote", addr.String()).Int("failures", n).Str("lockout", d.Round(time.Millisecond).String()).
			Msg("web: too many wrong gateway tokens: address locked out")
	}
}

func waitText(secs int) string {
	if secs < 90 {
		return fmt.Sprintf("%d seconds", secs)
	}
	return fmt.Sprintf("%d minutes", (secs+59)/60)
}
