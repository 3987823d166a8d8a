// Package netguard keeps requests made on the agent's behalf (web_fetch, media URLs, MCP over
// HTTP) away from this machine and its networks: the SSRF guard.
//
// A Guard resolves a host itself, refuses it when any address it resolves to is loopback,
// private, link-local (cloud metadata), CGNAT, multicast, unspecified or reserved — IPv4 and
// IPv6, IPv4 carried in IPv6, and the numeric spellings resolvers accept (127.1, 0x7f000001,
// 2130706433, 0177.0.0.1) — and then dials the very address it checked, so a second DNS answer
// cannot swap in another (DNS rebinding). Its http.Client checks again on every redirect and
// speaks only http and https. Config.AllowPrivate opens exceptions by CIDR or host name.
//
// Nothing but the configuration weakens a Guard: the resolver and dialer tests replace are
// unexported fields.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// ErrBlocked is wrapped by every refusal of the guard.
var ErrBlocked = errors.New("blocked address")

// Config is the guard's configuration (tools.web.allowPrivate).
type Config struct {
	// AllowPrivate lists exceptions: a CIDR ("10.1.0.0/16"), an address ("192.168.1.5") or a
	// host name ("nas.lan") whose addresses are allowed whatever they are.
	AllowPrivate []string
}

// Guard checks and dials. It is safe for concurrent use.
type Guard struct {
	nets  []netip.Prefix
	hosts map[string]bool

	// Replaced by tests in this package only; nil means the system's.
	resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New builds a guard; an entry of AllowPrivate that is neither a CIDR, an address nor a host
// name is an error that names it.
func New(cfg Config) (*Guard, error) {
	g := &Guard{hosts: map[string]bool{}}
	for _, e := range cfg.AllowPrivate {
		p, host, err := parseAllow(e)
		switch {
		case err != nil:
			return nil, fmt.Errorf("netguard: allowPrivate: %w", err)
		case host != "":
			g.hosts[host] = true
		default:
			g.nets = append(g.nets, p)
		}
	}
	return g, nil
}

// CheckAllowEntry reports whether e is a valid allowPrivate entry, with a message a user can
// act on when not.
func CheckAllowEntry(e string) error {
	_, _, err := parseAllow(e)
	return err
}

func parseAllow(e string) (netip.Prefix, string, error) {
	e = strings.TrimSpace(e)
	if p, err := netip.ParsePrefix(e); err == nil {
		return p.Masked(), "", nil
	}
	if a, err := netip.ParseAddr(e); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), "", nil
	}
	if !validHostName(e) {
		return netip.Prefix{}, "", fmt.Errorf("%q is neither a CIDR (10.0.0.0/8), an IP address nor a host name", e)
	}
	return netip.Prefix{}, normHost(e), nil
}

func normHost(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }

func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for _, r := range l {
			if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

// CheckURL refuses a URL reef must not fetch by its spelling alone: a scheme other than http
// or https, user info, no host, or a host that is a blocked address in any spelling. Names are
// checked when dialled.
func (g *Guard) CheckURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return fmt.Errorf("%w: only http and https URLs can be fetched, not %q", ErrBlocked, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: URLs with a user name or password are not fetched", ErrBlocked)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: the URL has no host", ErrBlocked)
	}
	if g.hosts[normHost(host)] {
		return nil
	}
	a, ok, err := parseHost(host)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBlocked, err)
	}
	if ok {
		return g.checkAddr(host, a)
	}
	if isLocalName(host) {
		return fmt.Errorf("%w: %s names this machine", ErrBlocked, host)
	}
	return nil
}

// isLocalName reports names that mean this machine whatever DNS says.
func isLocalName(host string) bool {
	h := normHost(host)
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

func (g *Guard) checkAddr(host string, a netip.Addr) error {
	a = a.WithZone("")
	if !isBlocked(a) {
		return nil
	}
	for _, p := range g.nets {
		if p.Contains(a) || (a.Is4In6() && p.Contains(a.Unmap())) {
			return nil
		}
	}
	if host != a.String() {
		return fmt.Errorf("%w: %s is %s, a private or reserved address (tools.web.allowPrivate opens exceptions)", ErrBlocked, host, a)
	}
	return fmt.Errorf("%w: %s is a private or reserved address (tools.web.allowPrivate opens exceptions)", ErrBlocked, a)
}

// Resolve returns the addresses of host after checking every one: a name with one blocked
// address is refused whole.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, ok, err := parseHost(host); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBlocked, err)
	} else if ok {
		if g.hosts[normHost(host)] {
			return []netip.Addr{a}, nil
		}
		return []netip.Addr{a}, g.checkAddr(host, a)
	}
	if isLocalName(host) && !g.hosts[normHost(host)] {
		return nil, fmt.Errorf("%w: %s names this machine", ErrBlocked, host)
	}
	var r interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	} = net.DefaultResolver
	if g.resolver != nil {
		r = g.resolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("netguard: resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("netguard: resolve %s: no addresses", host)
	}
	if g.hosts[normHost(host)] {
		return addrs, nil
	}
	for _, a := range addrs {
		if err := g.checkAddr(host, a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// DialContext resolves and checks addr's host, then dials the addresses it checked, one after
// the other; it never looks the name up again. It fits http.Transport.DialContext.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %s: %w", addr, err)
	}
	addrs, err := g.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	dial := (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	if g.dial != nil {
		dial = g.dial
	}
	var errs []error
	for _, a := range addrs {
		c, err := dial(ctx, network, net.JoinHostPort(a.WithZone("").String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("netguard: dial %s: %w", host, errors.Join(errs...))
}

// Client returns an http.Client whose every connection goes through the guard, with no proxy
// (an environment proxy would dial for us, unchecked), that follows at most maxRedirects
// redirects, each checked like the first URL, and gives up after timeout.
func (g *Guard) Client(timeout time.Duration, maxRedirects int) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return g.CheckURL(req.URL)
		},
	}
}
