package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/channels/telegram/telegramtest"
)

// TestE2EChannelStateIsHonest: a Telegram API that refuses connections is shown as
// reconnecting with the reason in plain words — by reef status, /readyz (503), the Overview
// page and reef_connector_up (0) — within 10 s, never as connected; once the API answers,
// all four say connected.
func TestE2EChannelStateIsHonest(t *testing.T) {
	tg := telegramtest.NewWithToken(t, tgToken)
	addr := freeAddr(t) // nothing listens there yet: connection refused
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "reef.yaml"), []byte(telegramYAML("http://"+addr)), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &webGateway{env: withFake(home, newFake(t)), home: home, tg: tg}
	w.launch(t)

	refused := regexp.MustCompile(`channel telegram +reconnecting \(since \d\d:\d\d:\d\d, (next try in \S+|trying now)\): ` +
		regexp.QuoteMeta(addr) + ` refused the connection`)
	var status string
	if !eventually(10*time.Second, func() bool {
		status = reef(t, w.env, "", "status").stdout
		return refused.MatchString(status)
	}) {
		t.Fatalf("reef status with Telegram refusing connections:\n%s\nwant %s", status, refused)
	}
	if strings.Contains(status, "dial tcp") || strings.Contains(status, "getMe:") {
		t.Errorf("reef status shows a raw error chain:\n%s", status)
	}
	code, body := readyz(t, w.url)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "telegram reconnecting") || !strings.Contains(body, "refused the connection") {
		t.Errorf("/readyz = %d %s, want 503 naming telegram and why", code, body)
	}
	if code, page := w.get(t, "/"); code != 200 || !strings.Contains(page, `<td>telegram</td><td><span class="bad">reconnecting (since`) ||
		!strings.Contains(page, addr+" refused the connection") {
		t.Errorf("Overview = %d, want telegram reconnecting and why:\n%s", code, page)
	}
	if _, m := w.get(t, "/metrics"); !strings.Contains(m, `reef_connector_up{channel="telegram"} 0`) {
		t.Errorf("/metrics lacks reef_connector_up 0 for telegram:\n%s", m)
	}

	// The API comes back on the same address: everything says connected.
	target, _ := url.Parse(tg.URL)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the API cannot come back on %s: %v", addr, err)
	}
	proxy := &http.Server{Handler: httputil.NewSingleHostReverseProxy(target)}
	go proxy.Serve(ln)
	t.Cleanup(func() { proxy.Close() })
	if !eventually(time.Minute, func() bool {
		status = reef(t, w.env, "", "status").stdout
		return strings.Contains(status, "channel telegram  connected;")
	}) {
		t.Fatalf("reef status after the API came back:\n%s", status)
	}
	if code, body := readyz(t, w.url); code != 200 {
		t.Errorf("/readyz once connected = %d %s, want 200", code, body)
	}
	if _, m := w.get(t, "/metrics"); !strings.Contains(m, `reef_connector_up{channel="telegram"} 1`) {
		t.Errorf("/metrics lacks reef_connector_up 1 for telegram:\n%s", m)
	}
}

// readyz fetches /readyz (no token needed).
func readyz(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
