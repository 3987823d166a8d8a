package web

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// fakeClock is the limiter's clock in tests: it moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a log sink the handlers may write to from any goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// limitRig is a Server driven through its handler, so each request can come from any address.
type limitRig struct {
	srv   *Server
	h     http.Handler
	clock *fakeClock
	log   *syncBuffer
}

func newLimitRig(t *testing.T) *limitRig {
	t.Helper()
	lr := &limitRig{clock: &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, log: &syncBuffer{}}
	srv, err := New(Config{Listen: "127.0.0.1:0", Token: testToken, Version: "test", Backend: &fakeBackend{},
		Secrets: []string{canary, testToken}}, zerolog.New(lr.log))
	if err != nil {
		t.Fatal(err)
	}
	srv.limit.now = lr.clock.now
	lr.srv, lr.h = srv, srv.Handler()
	return lr
}

// login posts the login form with token from remote (ip:port).
func (lr *limitRig) login(remote, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = remote
	w := httptest.NewRecorder()
	lr.h.ServeHTTP(w, req)
	return w
}

// bearer asks for /sessions with token as the Bearer token from remote.
func (lr *limitRig) bearer(remote, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.RemoteAddr = remote
	w := httptest.NewRecorder()
	lr.h.ServeHTTP(w, req)
	return w
}

// failN sends n wrong tokens from remote, alternating form and Bearer, each answered 401.
func (lr *limitRig) failN(t *testing.T, remote string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		var w *httptest.ResponseRecorder
		if i%2 == 0 {
			w = lr.login(remote, fmt.Sprintf("wrong-guess-%d", i))
		} else {
			w = lr.bearer(remote, fmt.Sprintf("wrong-guess-%d", i))
		}
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d from %s: %d, want 401", i+1, remote, w.Code)
		}
	}
}

const attacker, owner = "192.0.2.7:40000", "198.51.100.9:51000"

func TestLoginLockoutAfterFiveFailures(t *testing.T) {
	lr := newLimitRig(t)
	lr.failN(t, attacker, limitFailures)
	// Locked out: even the right token is refused unchecked, by form and by Bearer.
	w := lr.login(attacker, testToken)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("form login after %d failures: %d Retry-After %q, want 429 and 60", limitFailures, w.Code, w.Header().Get("Retry-After"))
	}
	if body := w.Body.String(); !strings.Contains(body, "try again in 60 seconds") || !strings.Contains(body, `name="token"`) {
		t.Errorf("lockout page: %s", body)
	}
	if len(w.Result().Cookies()) != 0 {
		t.Errorf("a locked-out login got a cookie")
	}
	w = lr.bearer(attacker, testToken)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), `"error"`) {
		t.Errorf("Bearer after lockout: %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	// Retry-After counts down with the clock.
	lr.clock.add(45 * time.Second)
	if got := lr.bearer(attacker, "wrong").Header().Get("Retry-After"); got != "15" {
		t.Errorf("Retry-After 45 s into the lockout: %q, want 15", got)
	}
	// One warning per lockout, naming the address and never a token.
	logs := lr.log.String()
	if n := strings.Count(logs, "locked out"); n != 1 {
		t.Errorf("%d lockout warnings, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs, "192.0.2.7") || strings.Contains(logs, "wrong-guess") || strings.Contains(logs, testToken) {
		t.Errorf("lockout log has no address or has a token:\n%s", logs)
	}
}

func TestLockoutNeverBlocksAnotherAddress(t *testing.T) {
	lr := newLimitRig(t)
	lr.failN(t, attacker, limitFailures)
	if w := lr.bearer(attacker, "wrong"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("attacker: %d, want 429", w.Code)
	}
	if w := lr.login(owner, testToken); w.Code != http.StatusSeeOther {
		t.Errorf("the right token by form from another address: %d, want 303", w.Code)
	}
	if w := lr.bearer(owner, testToken); w.Code != http.StatusOK {
		t.Errorf("the right Bearer token from another address: %d, want 200", w.Code)
	}
	if w := lr.bearer("[2001:db8:1::5]:443", "wrong"); w.Code != http.StatusUnauthorized {
		t.Errorf("a wrong token from a third address: %d, want 401 (its own count)", w.Code)
	}
	// A browser logged in before keeps working from the locked address: the cookie is no guess.
	req := httptest.NewRequest("GET", "/sessions", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: lr.srv.auth.session()})
	req.RemoteAddr = attacker
	w := httptest.NewRecorder()
	lr.h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Errorf("the login cookie from the locked address: %d, want 200", w.Code)
	}
}

func TestLockoutEndsAndSuccessResets(t *testing.T) {
	lr := newLimitRig(t)
	lr.failN(t, attacker, limitFailures)
	lr.clock.add(limitLockout - time.Second)
	if w := lr.login(attacker, testToken); w.Code != http.StatusTooManyRequests {
		t.Fatalf("a second before the lockout ends: %d, want 429", w.Code)
	}
	lr.clock.add(2 * time.Second)
	if w := lr.login(attacker, testToken); w.Code != http.StatusSeeOther {
		t.Fatalf("the right token after the lockout: %d, want 303", w.Code)
	}
	// The success wiped the record: five fresh tries before the next lockout.
	lr.failN(t, attacker, limitFailures-1)
	if w := lr.bearer(attacker, testToken); w.Code != http.StatusOK {
		t.Fatalf("the right token after %d failures: %d, want 200", limitFailures-1, w.Code)
	}
	lr.failN(t, attacker, limitFailures)
	if w := lr.bearer(attacker, testToken); w.Code != http.StatusTooManyRequests {
		t.Errorf("after %d fresh failures: %d, want 429", limitFailures, w.Code)
	}
}

func TestFailuresOutsideTheWindowDoNotAddUp(t *testing.T) {
	lr := newLimitRig(t)
	lr.failN(t, attacker, limitFailures-1)
	lr.clock.add(limitWindow + time.Second)
	lr.failN(t, attacker, limitFailures-1) // 401s all: the first four are out of the window
	if w := lr.bearer(attacker, testToken); w.Code != http.StatusOK {
		t.Errorf("after %d failures in each of two windows: %d, want 200", limitFailures-1, w.Code)
	}
}

func TestLockoutBacksOffExponentiallyToTheCap(t *testing.T) {
	lr := newLimitRig(t)
	lr.failN(t, attacker, limitFailures)
	want := limitLockout
	for i := 0; i < 10; i++ {
		got := lr.bearer(attacker, "wrong").Header().Get("Retry-After")
		if got != fmt.Sprint(int(want.Seconds())) {
			t.Fatalf("lockout %d: Retry-After %q, want %d", i+1, got, int(want.Seconds()))
		}
		lr.clock.add(want)
		lr.failN(t, attacker, 1) // one more wrong token locks it again, for twice as long
		want = min(2*want, limitMaxLockout)
	}
	if want != limitMaxLockout {
		t.Errorf("the backoff never reached the cap: %s", want)
	}
	if n := strings.Count(lr.log.String(), "locked out"); n != 11 {
		t.Errorf("%d lockout warnings for 11 lockouts", n)
	}
	// A quiet spell long enough forgets it all.
	lr.clock.add(limitMaxLockout + limitForget)
	lr.failN(t, attacker, limitFailures-1)
	if w := lr.bearer(attacker, testToken); w.Code != http.StatusOK {
		t.Errorf("after a quiet spell: %d, want 200", w.Code)
	}
}

func TestStaleCookiesAreNotCounted(t *testing.T) {
	lr := newLimitRig(t)
	for i := 0; i < 3*limitFailures; i++ {
		req := httptest.NewRequest("GET", "/sessions", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: "made-with-an-old-token"})
		req.RemoteAddr = owner
		w := httptest.NewRecorder()
		lr.h.ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("stale cookie %d: %d, want 401", i+1, w.Code)
		}
	}
	if w := lr.login(owner, testToken); w.Code != http.StatusSeeOther {
		t.Errorf("login after stale cookies: %d, want 303", w.Code)
	}
}

func TestLimiterMemoryIsBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	l := newLimiter()
	l.now = clock.now
	const n = 100_000
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	for i := 0; i < n; i++ {
		a := addr(i)
		l.fail(a)
		l.fail(a)
		clock.add(time.Millisecond)
	}
	if got := l.tracked(); got > limitMaxAddrs || got < limitMaxAddrs/2 {
		t.Fatalf("tracking %d addresses after %d, want at most %d", got, n, limitMaxAddrs)
	}
	if len(l.addrs) != l.order.Len() {
		t.Fatalf("map %d and list %d disagree", len(l.addrs), l.order.Len())
	}
	if _, ok := l.addrs[addr(n-1)]; !ok {
		t.Errorf("the newest address was evicted")
	}
	if _, ok := l.addrs[addr(0)]; ok {
		t.Errorf("the oldest address is still tracked")
	}
	// Records with no failure for limitForget go on their own.
	clock.add(limitForget + time.Minute)
	l.fail(netip.MustParseAddr("10.255.255.255"))
	if got := l.tracked(); got != 1 {
		t.Errorf("after a quiet spell: %d addresses tracked, want 1", got)
	}
}

func TestClientAddr(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"192.0.2.7:1234", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:1234", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::"}, // a /64: one host's block
		{"[2001:db8:1:2:bbbb::9]:443", "2001:db8:1:2::"},
		{"[fe80::1%eth0]:80", "fe80::"},
		{"192.0.2.8", "192.0.2.8"},
		{"@", ""}, // no IP (a unix socket): not counted
	} {
		a, ok := clientAddr(c.remote)
		got := ""
		if ok {
			got = a.String()
		}
		if got != c.want {
			t.Errorf("clientAddr(%q) = %q, want %q", c.remote, got, c.want)
		}
	}
}
