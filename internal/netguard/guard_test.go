package netguard

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDNS answers from a table; a name with several answers gives the next one per lookup
// (the last one again once they run out). One answer may hold several addresses: "a,b".
type fakeDNS struct {
	mu      sync.Mutex
	answers map[string][]string
	lookups map[string]int
}

func (d *fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lookups == nil {
		d.lookups = map[string]int{}
	}
	as, ok := d.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(d.lookups[host], len(as)-1)
	d.lookups[host]++
	var addrs []netip.Addr
	for _, a := range strings.Split(as[i], ",") {
		addrs = append(addrs, netip.MustParseAddr(a))
	}
	return addrs, nil
}

func (d *fakeDNS) count(host string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups[host]
}

// publicIP stands for a public server in tests; the fake dialer routes it to a local one.
const publicIP = "93.184.216.34"

// routedGuard is a guard whose DNS is dns and whose dialer sends connections for publicIP to
// srv (on 127.0.0.1), recording every address dialled. Connections to any other address are
// dialled for real (they must be refused before that).
func routedGuard(t *testing.T, cfg Config, dns *fakeDNS, srv *httptest.Server) (*Guard, *[]string) {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	dialled := &[]string{}
	g.resolver = dns
	g.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		*dialled = append(*dialled, addr)
		mu.Unlock()
		host, _, _ := net.SplitHostPort(addr)
		if host == publicIP && srv != nil {
			addr = srv.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return g, dialled
}

func TestCheckURLRefusesPrivateSpellings(t *testing.T) {
	g, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	refused := []string{
		"http://127.0.0.1/", "http://127.1/", "http://127.0.1/", "http://0x7f000001/", "http://2130706433/",
		"http://0177.0.0.1/", "http://0x7f.0.0.1/", "http://0177.1/", "http://127.0.0.1./", "http://017700000001/",
		"http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[0:0:0:0:0:ffff:127.0.0.1]/",
		"http://[::127.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[2002:7f00:1::]/", "http://0.0.0.0/", "http://0/",
		"http://[::]/", "http://10.0.0.1/", "http://10.255.255.255/", "http://172.16.0.1/", "http://172.31.255.254/",
		"http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/",
		"http://0xa9fea9fe/", "http://2852039166/", "http://[fd00:ec2::254]/", "http://[fd00::1]/", "http://[fe80::1%25eth0]/",
		"http://100.64.0.1/", "http://100.127.255.254/", "http://224.0.0.1/", "http://239.255.255.250/", "http://[ff02::1]/",
		"http://255.255.255.255/", "http://192.0.0.192/", "http://198.18.0.1/", "http://localhost/", "http://LOCALHOST./",
		"http://app.localhost:8080/", "http://1.2.3.4.5/", "http://256.1.1.1/", "http://0x100000000/", "http://09.0.0.1/",
		"https://[2001:db8::1]/", "https://[2001:0:4136:e378::1]/",
		"file:///etc/passwd", "gopher://example.com/", "ftp://example.com/", "http://user:pw@example.com/",
	}
	for _, raw := range refused {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if err := g.CheckURL(u); !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%s) = %v, want ErrBlocked", raw, err)
		}
	}
	allowed := []string{"http://example.com/", "https://93.184.216.34/", "http://8.8.8.8/", "https://[2606:4700:4700::1111]/",
		"http://100.63.255.255/", "http://100.128.0.0/", "http://172.32.0.1/", "http://[::ffff:8.8.8.8]/", "http://1.1/"}
	for _, raw := range allowed {
		u, _ := url.Parse(raw)
		if err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v, want nil", raw, err)
		}
	}
}

func TestParseHostSpellings(t *testing.T) {
	for host, want := range map[string]string{
		"127.1": "127.0.0.1", "0x7f000001": "127.0.0.1", "2130706433": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"10.1": "10.0.0.1", "192.168.257": "192.168.1.1", "0x0A.0.0.1": "10.0.0.1", "::ffff:127.0.0.1": "::ffff:127.0.0.1",
	} {
		a, ok, err := parseHost(host)
		if err != nil || !ok || a.String() != want {
			t.Errorf("parseHost(%q) = %v, %v, %v; want %s", host, a, ok, err, want)
		}
	}
}

func TestAllowPrivateOpensExceptions(t *testing.T) {
	g, err := New(Config{AllowPrivate: []string{"10.1.0.0/16", "192.168.1.5", "nas.lan"}})
	if err != nil {
		t.Fatal(err)
	}
	for raw, ok := range map[string]bool{
		"http://10.1.2.3/": true, "http://10.2.0.1/": false, "http://192.168.1.5/": true, "http://[::ffff:192.168.1.5]/": true,
		"http://192.168.1.6/": false, "http://nas.lan/": true, "http://127.0.0.1/": false,
	} {
		u, _ := url.Parse(raw)
		if err := g.CheckURL(u); (err == nil) != ok {
			t.Errorf("CheckURL(%s) = %v, want allowed %v", raw, err, ok)
		}
	}
	g.resolver = &fakeDNS{answers: map[string][]string{"nas.lan": {"192.168.7.7"}, "other.lan": {"192.168.7.7"}}}
	if _, err := g.Resolve(context.Background(), "nas.lan"); err != nil {
		t.Errorf("Resolve(nas.lan) = %v, want allowed by name", err)
	}
	if _, err := g.Resolve(context.Background(), "other.lan"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Resolve(other.lan) = %v, want ErrBlocked", err)
	}
	if _, err := New(Config{AllowPrivate: []string{"not a host/"}}); err == nil {
		t.Error("New accepted a bad allowPrivate entry")
	}
}

func TestNameResolvingToPrivateIsRefused(t *testing.T) {
	dns := &fakeDNS{answers: map[string][]string{"intranet.example.com": {"10.0.0.1"}, "meta.example.com": {"169.254.169.254"},
		"v6.example.com": {"::ffff:127.0.0.1"}, "mixed.example.com": {publicIP + ",fd00::1"}, "cgnat.example.com": {"100.64.0.1"}}}
	g, dialled := routedGuard(t, Config{}, dns, nil)
	c := g.Client(5*time.Second, 3)
	for _, host := range []string{"intranet.example.com", "meta.example.com", "v6.example.com", "mixed.example.com", "cgnat.example.com"} {
		_, err := c.Get("http://" + host + "/")
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s = %v, want ErrBlocked", host, err)
		}
	}
	if len(*dialled) != 0 {
		t.Errorf("dialled %v, want nothing", *dialled)
	}
}

func TestRedirectToLoopbackIsRefused(t *testing.T) {
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	defer local.Close()
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-ip":
			http.Redirect(w, r, local.URL+"/", http.StatusFound)
		case "/to-name":
			http.Redirect(w, r, "http://inside.example.com:"+local.URL[strings.LastIndex(local.URL, ":")+1:]+"/", http.StatusFound)
		default:
			io.WriteString(w, "public")
		}
	}))
	defer public.Close()
	dns := &fakeDNS{answers: map[string][]string{"public.example.com": {publicIP}, "inside.example.com": {"127.0.0.1"}}}
	g, dialled := routedGuard(t, Config{}, dns, public)
	c := g.Client(5*time.Second, 3)

	resp, err := c.Get("http://public.example.com/")
	if err != nil {
		t.Fatalf("GET public: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "public" {
		t.Fatalf("got %q, want public", body)
	}
	for _, path := range []string{"/to-ip", "/to-name"} {
		resp, err := c.Get("http://public.example.com" + path)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s = %v, want ErrBlocked", path, err)
		}
	}
	for _, a := range *dialled {
		if !strings.HasPrefix(a, publicIP+":") {
			t.Errorf("dialled %s, want only %s", a, publicIP)
		}
	}
}

func TestDNSRebindingDialsTheCheckedAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	// The first answer is public, every later one is loopback: a guard that looked the name
	// up again to dial would reach 127.0.0.1.
	dns := &fakeDNS{answers: map[string][]string{"rebind.example.com": {publicIP, "127.0.0.1"}}}
	g, dialled := routedGuard(t, Config{}, dns, srv)
	c := g.Client(5*time.Second, 3)
	c.Transport.(*http.Transport).DisableKeepAlives = true

	resp, err := c.Get("http://rebind.example.com/")
	if err != nil {
		t.Fatalf("first GET: %v", err)
	}
	resp.Body.Close()
	if got := dns.count("rebind.example.com"); got != 1 {
		t.Errorf("%d lookups for one request, want 1", got)
	}
	if len(*dialled) != 1 || !strings.HasPrefix((*dialled)[0], publicIP+":") {
		t.Errorf("dialled %v, want the checked %s", *dialled, publicIP)
	}
	// The next connection sees the loopback answer and is refused.
	if _, err := c.Get("http://rebind.example.com/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("second GET = %v, want ErrBlocked", err)
	}
	if len(*dialled) != 1 {
		t.Errorf("dialled %v after the refusal, want no new dial", *dialled)
	}
}

func TestRedirectLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/")); err == nil && n > 0 {
			http.Redirect(w, r, "/"+strconv.Itoa(n-1), http.StatusFound)
			return
		}
		io.WriteString(w, "end")
	}))
	defer srv.Close()
	g, err := New(Config{AllowPrivate: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Client(5*time.Second, 3)
	resp, err := c.Get(srv.URL + "/3")
	if err != nil {
		t.Fatalf("3 redirects: %v", err)
	}
	resp.Body.Close()
	if _, err := c.Get(srv.URL + "/4"); err == nil || !strings.Contains(err.Error(), "stopped after 3 redirects") {
		t.Errorf("4 redirects: %v, want stopped", err)
	}
}

func TestEnvironmentProxyIsNotUsed(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://10.0.0.1:3128")
	g, _ := New(Config{AllowPrivate: []string{"127.0.0.1"}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") }))
	defer srv.Close()
	resp, err := g.Client(5*time.Second, 3).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
