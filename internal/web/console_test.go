package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/logring"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/schedule"
	"github.com/reefgw/reef/usage"
)

// fakeBackend's Console: a log holding the canary, one job with a run, a day of usage.

var fakeLog = func() *logring.Ring {
	r := logring.New()
	r.Write([]byte(`{"level":"info","time":"2026-12-06T08:00:00Z","message":"web UI listening","url":"http://127.0.0.1:1/"}`))
	r.Write([]byte(`{"level":"error","time":"2026-12-06T08:00:01Z","error":"401 for ` + canary + `","message":"channel stopped; fix the credentials and restart reef"}`))
	return r
}()

func (b *fakeBackend) CronJob(ctx context.Context, id string) (CronDetail, error) {
	jobs, _ := b.CronJobs(ctx)
	if id != jobs[0].ID {
		return CronDetail{}, fmt.Errorf("%w: no job %q", ErrNotFound, id)
	}
	return CronDetail{Job: jobs[0], Runs: []schedule.Run{{JobID: id, AtMs: 1, Reason: "due", Status: "error", Error: "key " + canary}}}, nil
}

func (b *fakeBackend) CronSave(_ context.Context, id string, in schedule.JobInput) (schedule.Job, error) {
	j, err := schedule.NewJob(in, "new1", "main", "", time.Now())
	if err != nil {
		return j, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	b.record("cron save " + id + " " + j.Schedule.Human())
	return j, nil
}

func (b *fakeBackend) Logs(q logring.Query) []logring.Line       { return fakeLog.Lines(q) }
func (b *fakeBackend) FollowLogs() (<-chan logring.Line, func()) { return fakeLog.Follow() }
func (b *fakeBackend) Usage(_ context.Context, days int) (usage.Report, error) {
	from, to := usage.Range(time.Now(), days)
	rows := []usage.Row{{Key: usage.Key{Day: to, Agent: "main", Model: "openai/gpt", Channel: "telegram " + canary},
		Usage: messages.Usage{InputTokens: 2_000_000, OutputTokens: 1000}}}
	return usage.Build(rows, map[string]usage.Price{"openai/gpt": {Input: 2, Output: 8}}, from, to), nil
}

var consoleRoutes = []struct{ method, path, ctype, body string }{
	{"GET", "/cron/edit", "", ""},
	{"GET", "/cron/edit?id=job1", "", ""},
	{"GET", "/cron/job?id=job1", "", ""},
	{"GET", "/cron/preview?kind=cron&expr=0+8+*+*+*&tz=Asia/Shanghai", "", ""},
	{"POST", "/cron/save", "application/x-www-form-urlencoded", "kind=every&every=1h&payload=systemEvent&text=stretch&deliver=announce"},
	{"GET", "/logs", "", ""},
	{"GET", "/logs?level=error&q=credentials", "", ""},
	{"GET", "/usage", "", ""},
	{"GET", "/usage?days=30&format=json", "", ""},
}

func TestConsolePages(t *testing.T) {
	r := newRig(t)
	for _, rt := range consoleRoutes {
		resp := r.do(t, rt.method, rt.path, "bearer", "", rt.ctype, rt.body)
		body := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, resp.StatusCode, body)
		}
		if strings.Contains(body, canary) || strings.Contains(body, testToken) {
			t.Errorf("%s %s: a secret in the response:\n%s", rt.method, rt.path, body)
		}
		// without the token: 401, and nothing changed
		if resp := r.do(t, rt.method, rt.path, "", "", rt.ctype, rt.body); resp.StatusCode != 401 {
			t.Errorf("%s %s without the token: %d", rt.method, rt.path, resp.StatusCode)
		}
	}
	if got := r.backend.recorded(); len(got) != 1 || got[0] != "cron save  every 1h" {
		t.Errorf("changes: %v", got)
	}
}

func TestConsolePostsNeedCSRF(t *testing.T) {
	r := newRig(t)
	form := "kind=every&every=1h&payload=systemEvent&text=stretch"
	if resp := r.do(t, "POST", "/cron/save", "cookie", "", "application/x-www-form-urlencoded", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cron save with the cookie and no CSRF token: %d, want 403", resp.StatusCode)
	}
	if got := r.backend.recorded(); len(got) != 0 {
		t.Errorf("saved without the CSRF token: %v", got)
	}
	resp := r.do(t, "POST", "/cron/save", "cookie", r.srv.auth.csrf(), "application/x-www-form-urlencoded", form)
	if resp.StatusCode != 200 {
		t.Errorf("cron save with the CSRF token: %d %s", resp.StatusCode, readAll(t, resp))
	}
}

func TestCronFormRefusesInline(t *testing.T) {
	r := newRig(t)
	req, _ := http.NewRequest("POST", r.ts.URL+"/cron/save", strings.NewReader(url.Values{
		"kind": {"every"}, "every": {"30s"}, "payload": {"systemEvent"}, "text": {"x"}, "name": {"<script>x</script>"}}.Encode()))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != 400 || !strings.Contains(body, "under one minute") || !strings.Contains(body, `value="30s"`) {
		t.Errorf("a too short interval: %d, want the form again with the reason:\n%s", resp.StatusCode, body)
	}
	if strings.Contains(body, "<script>x") {
		t.Error("the form echoes the name unescaped")
	}
}

func TestCronPreviewAndPages(t *testing.T) {
	r := newRig(t)
	body := readAll(t, r.do(t, "GET", "/cron/preview?kind=cron&expr=0+8+*+*+*&tz=Asia/Shanghai", "bearer", "", "", ""))
	if !strings.Contains(body, "every day at 08:00 Asia/Shanghai — next: ") {
		t.Errorf("preview: %s", body)
	}
	body = readAll(t, r.do(t, "GET", "/cron", "bearer", "", "", ""))
	if !strings.Contains(body, "every day at 09:00 UTC — next: ") || strings.Contains(body, " ms") {
		t.Errorf("the cron list does not say the schedule in words:\n%s", body)
	}
	body = readAll(t, r.do(t, "GET", "/usage", "bearer", "", "", ""))
	// 2M input at 2/M + 1000 output at 8/M = 4.008
	if !strings.Contains(body, "4.0080") || !strings.Contains(body, "<svg") || !strings.Contains(body, "2.0M") {
		t.Errorf("usage page:\n%s", body)
	}
	body = readAll(t, r.do(t, "GET", "/logs?level=error", "bearer", "", "", ""))
	if !strings.Contains(body, "fix the credentials") || strings.Contains(body, "web UI listening") {
		t.Errorf("logs filtered to errors:\n%s", body)
	}
}

func (b *fakeBackend) ChannelAction(_ context.Context, action, name string) error {
	if name != "telegram" {
		return fmt.Errorf("%w: no channel %q", ErrNotFound, name)
	}
	b.record("channel " + action + " " + name)
	return nil
}

func TestChannelsPage(t *testing.T) {
	r := newRig(t)
	body := readAll(t, r.do(t, "GET", "/channels", "bearer", "", "", ""))
	if !strings.Contains(body, "telegram") || !strings.Contains(body, "failed") || !strings.Contains(body, "ABCD2345") ||
		strings.Contains(body, canary) || !strings.Contains(body, "[redacted]") {
		t.Errorf("channels page:\n%s", body)
	}
	form := "channel=telegram"
	if resp := r.do(t, "POST", "/channels/pause", "cookie", "", "application/x-www-form-urlencoded", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("pause with the cookie and no CSRF token: %d, want 403", resp.StatusCode)
	}
	if resp := r.do(t, "POST", "/channels/pause", "", "", "application/x-www-form-urlencoded", form); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("pause without the token: %d, want 401", resp.StatusCode)
	}
	for _, action := range []string{"pause", "resume", "restart"} {
		if resp := r.do(t, "POST", "/channels/"+action, "cookie", r.srv.auth.csrf(), "application/x-www-form-urlencoded", form); resp.StatusCode != 200 {
			t.Errorf("%s: %d", action, resp.StatusCode)
		}
	}
	if resp := r.do(t, "POST", "/channels/explode", "bearer", "", "application/x-www-form-urlencoded", form); resp.StatusCode != 400 {
		t.Errorf("unknown action: %d", resp.StatusCode)
	}
	if resp := r.do(t, "POST", "/channels/pause", "bearer", "", "application/x-www-form-urlencoded", "channel=nope"); resp.StatusCode != 404 {
		t.Errorf("unknown channel: %d", resp.StatusCode)
	}
	if got := strings.Join(r.backend.recorded(), "|"); got != "channel pause telegram|channel resume telegram|channel restart telegram" {
		t.Errorf("changes: %s", got)
	}
}

func TestSessionsFilteredByChannelAndAgent(t *testing.T) {
	r := newRig(t)
	body := readAll(t, r.do(t, "GET", "/sessions?channel=webchat", "bearer", "", "", ""))
	if !strings.Contains(body, "agent:main:webchat:direct:owner") || strings.Contains(body, ">agent:main:subagent:1<") ||
		!strings.Contains(body, `<option value="webchat" selected>`) || !strings.Contains(body, "format=md") {
		t.Errorf("sessions of channel webchat:\n%s", body)
	}
	body = readAll(t, r.do(t, "GET", "/sessions?agent=other", "bearer", "", "", ""))
	if strings.Contains(body, "agent:main:webchat:direct:owner</a>") || !strings.Contains(body, "no sessions") {
		t.Errorf("sessions of agent other:\n%s", body)
	}
}

func (b *fakeBackend) SessionAction(_ context.Context, action, key string) error {
	if key != "agent:main:webchat:direct:owner" {
		return fmt.Errorf("%w: no session %q", ErrNotFound, key)
	}
	b.record("session " + action + " " + key)
	return nil
}

func TestSessionResetAndDelete(t *testing.T) {
	r := newRig(t)
	form := "key=agent:main:webchat:direct:owner"
	for _, action := range []string{"reset", "delete"} {
		if resp := r.do(t, "POST", "/sessions/"+action, "cookie", "", "application/x-www-form-urlencoded", form); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with the cookie and no CSRF token: %d, want 403", action, resp.StatusCode)
		}
		if resp := r.do(t, "POST", "/sessions/"+action, "", "", "application/x-www-form-urlencoded", form); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", action, resp.StatusCode)
		}
		if resp := r.do(t, "POST", "/sessions/"+action, "cookie", r.srv.auth.csrf(), "application/x-www-form-urlencoded", form); resp.StatusCode != 200 {
			t.Errorf("%s: %d", action, resp.StatusCode)
		}
	}
	if resp := r.do(t, "POST", "/sessions/delete", "bearer", "", "application/x-www-form-urlencoded", "key=nope"); resp.StatusCode != 404 {
		t.Errorf("unknown session: %d", resp.StatusCode)
	}
	if resp := r.do(t, "POST", "/sessions/explode", "bearer", "", "application/x-www-form-urlencoded", form); resp.StatusCode != 400 {
		t.Errorf("unknown action: %d", resp.StatusCode)
	}
	if got := strings.Join(r.backend.recorded(), "|"); got != "session reset agent:main:webchat:direct:owner|session delete agent:main:webchat:direct:owner" {
		t.Errorf("changes: %s", got)
	}
	body := readAll(t, r.do(t, "GET", "/sessions", "bearer", "", "", ""))
	if !strings.Contains(body, `data-confirm="Delete this conversation`) || !strings.Contains(body, "/assets/confirm.js") {
		t.Error("the sessions page does not ask before deleting")
	}
}
