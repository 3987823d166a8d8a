package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCheckProviders: the Config page offers "check providers"; the action needs the CSRF
// token with the cookie, shows each provider's state, latency and reason, and no secret.
func TestCheckProviders(t *testing.T) {
	r := newRig(t)
	resp := r.do(t, "GET", "/config", "cookie", "", "", "")
	page := readAll(t, resp)
	if !strings.Contains(page, `action="/config/providers"`) || !strings.Contains(page, `id="check-providers"`) ||
		!strings.Contains(page, `name="csrf" value="`+r.srv.auth.csrf()+`"`) {
		t.Fatalf("the config page has no check-providers form with the CSRF token:\n%s", page)
	}
	if strings.Contains(page, `id="providers"`) || len(r.backend.recorded()) != 0 {
		t.Errorf("opening the config page probed the providers")
	}

	form := "application/x-www-form-urlencoded"
	if resp := r.do(t, "POST", "/config/providers", "cookie", "", form, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("check providers without the CSRF token: %d, want 403", resp.StatusCode)
	}
	if got := r.backend.recorded(); len(got) != 0 {
		t.Errorf("a request without the CSRF token probed: %v", got)
	}

	req, _ := http.NewRequest("POST", r.ts.URL+"/config/providers", strings.NewReader("csrf="+url.QueryEscape(r.srv.auth.csrf())))
	req.Header.Set("Content-Type", form)
	req.Header.Set("Accept", "text/html")
	req.AddCookie(&http.Cookie{Name: cookieName, Value: r.srv.auth.session()})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("check providers: %d %s", resp.StatusCode, page)
	}
	for _, want := range []string{`id="providers"`, `data-state="reachable"`, `data-state="auth refused"`, `data-state="unreachable"`,
		"connection refused", "3ms", "120ms", "http://127.0.0.1:11434/v1", "Incorrect API key provided: [redacted]", `pre class="config"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the probe's page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, canary) || strings.Contains(page, testToken) {
		t.Errorf("a secret on the probe's page:\n%s", page)
	}

	// A script gets JSON.
	resp = r.do(t, "POST", "/config/providers", "bearer", "", "", "")
	body := readAll(t, resp)
	var got struct{ Providers []ProviderProbe }
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Providers) != 3 || !got.Providers[0].OK || got.Providers[1].State != "auth refused" {
		t.Errorf("check providers as JSON: %d %s (%v)", resp.StatusCode, body, err)
	}
	if strings.Contains(body, canary) {
		t.Errorf("a secret in the JSON: %s", body)
	}
}
