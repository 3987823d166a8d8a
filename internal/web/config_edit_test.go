package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// editingBackend is fakeBackend with the Config page's editor: a text with "bad:" in it is
// refused, any other is saved.
type editingBackend struct {
	*fakeBackend
	saved []string
}

func (b *editingBackend) ConfigSource(context.Context) (ConfigEdit, error) {
	return ConfigEdit{Path: "/home/u/.reef/reef.yaml", YAML: "providers:\n  openai:\n    apiKey: " + canary + "\n",
		Form: ConfigForm{Accounts: []AccountSetting{{ID: "telegram", Streaming: "progress"}}, StreamingModes: []string{"off", "progress"}}}, nil
}

func (b *editingBackend) EditConfig(_ context.Context, text string, save bool) (ConfigEdit, error) {
	out := ConfigEdit{YAML: text, Checked: true}
	if strings.Contains(text, "bad:") {
		out.Problems = []string{`reef.yaml:1: unknown key "bad" at the top level`}
		return out, nil
	}
	if save {
		b.saved = append(b.saved, text)
		out.Saved, out.Applied = true, []string{"session changed"}
	}
	return out, nil
}

func (b *editingBackend) EditSettings(ctx context.Context, fields map[string]string, save bool) (ConfigEdit, error) {
	return b.EditConfig(ctx, "channels:\n  telegram:\n    streaming: {mode: "+fields["account.telegram.streaming"]+"}\n", save)
}

func TestConfigEditor(t *testing.T) {
	b := &editingBackend{fakeBackend: &fakeBackend{}}
	srv, err := New(Config{Listen: "127.0.0.1:0", Token: testToken, Version: "test", Backend: b, Secrets: []string{canary, testToken}}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{srv: srv, ts: httptest.NewServer(srv.Handler())}
	defer r.ts.Close()
	form := "application/x-www-form-urlencoded"

	page := readAll(t, r.do(t, "GET", "/config/edit", "cookie", "", "", ""))
	if strings.Contains(page, canary) || !strings.Contains(page, "apiKey: [redacted]") || !strings.Contains(page, `id="streaming-telegram"`) {
		t.Errorf("the editor page:\n%s", page)
	}
	post := "action=save&yaml=" + url.QueryEscape("session: {idleMinutes: 5}\n")
	if resp := r.do(t, "POST", "/config/edit", "cookie", "", form, post); resp.StatusCode != http.StatusForbidden || len(b.saved) != 0 {
		t.Errorf("a save without the CSRF token: %d, saved %q", resp.StatusCode, b.saved)
	}
	resp := r.do(t, "POST", "/config/edit", "cookie", srv.auth.csrf(), form, "action=save&yaml="+url.QueryEscape("bad: 1\n"))
	if body := readAll(t, resp); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `unknown key \"bad\"`) ||
		len(b.saved) != 0 {
		t.Errorf("an invalid edit: %d, saved %q\n%s", resp.StatusCode, b.saved, body)
	}
	resp = r.do(t, "POST", "/config/edit", "cookie", srv.auth.csrf(), form, post)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"Saved":true`) || len(b.saved) != 1 {
		t.Errorf("a valid save: %d, saved %q\n%s", resp.StatusCode, b.saved, body)
	}
	resp = r.do(t, "POST", "/config/edit", "bearer", "", form, "action=check&yaml="+url.QueryEscape("x: "+canary))
	if body := readAll(t, resp); strings.Contains(body, canary) {
		t.Errorf("the JSON answer holds a secret: %s", body)
	}
	resp = r.do(t, "POST", "/config/settings", "bearer", "", form, "action=save&account.telegram.streaming=off")
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"Saved":true`) ||
		len(b.saved) != 2 || !strings.Contains(b.saved[1], "mode: off") {
		t.Errorf("the form as JSON: %d, saved %q\n%s", resp.StatusCode, b.saved, body)
	}
}

// A backend without the editor has no editor page.
func TestConfigEditorAbsent(t *testing.T) {
	r := newRig(t)
	if resp := r.do(t, "GET", "/config/edit", "bearer", "", "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /config/edit without an editor: %d", resp.StatusCode)
	}
}
