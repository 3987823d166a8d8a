package main

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/providers/fake"
)

// Without a running gateway `reef cron` works on the database; next runs show in the job's zone.
func TestCronCLIOffline(t *testing.T) {
	home := newHome(t)
	e := withFake(home, newFake(t))
	add := reef(t, e, "", "cron", "add", "-name", "logs", "-cron", "10 18 * * *", "-tz", "Asia/Shanghai", "-text", "check the logs")
	if add.code != 0 || !strings.Contains(add.stdout, "added") || !strings.Contains(add.stdout, "18:10 CST") {
		t.Fatalf("cron add = %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	id := regexp.MustCompile(`added ([0-9a-f]+)`).FindStringSubmatch(add.stdout)[1]
	list := reef(t, e, "", "cron", "list")
	if list.code != 0 || !strings.Contains(list.stdout, id) || !strings.Contains(list.stdout, "18:10 CST") {
		t.Fatalf("cron list = %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	if res := reef(t, e, "", "cron", "disable", id); res.code != 0 || !strings.Contains(res.stdout, "disabled "+id) {
		t.Errorf("cron disable = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if res := reef(t, e, "", "cron", "list"); !strings.Contains(res.stdout, "disabled") {
		t.Errorf("list after disable:\n%s", res.stdout)
	}
	if res := reef(t, e, "", "cron", "run", id); res.code == 0 || !strings.Contains(res.stderr, "running reef") {
		t.Errorf("offline run = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, bad := range [][]string{
		{"-cron", "0 0 31 2 *", "-text", "x"}, {"-cron", "0 9 * * *", "-tz", "Nowhere/City", "-text", "x"},
		{"-every", "30s", "-text", "x"}, {"-cron", "whenever", "-text", "x"}, {"-text", "x"},
	} {
		if res := reef(t, e, "", append([]string{"cron", "add"}, bad...)...); res.code == 0 {
			t.Errorf("cron add %v accepted:\n%s", bad, res.stdout)
		}
	}
	if res := reef(t, e, "", "cron", "rm", id); res.code != 0 {
		t.Errorf("cron rm = %d\n%s", res.code, res.stderr)
	}
	if res := reef(t, e, "", "cron", "list"); !strings.Contains(res.stdout, "no cron jobs") {
		t.Errorf("list after rm:\n%s", res.stdout)
	}
}

// With a gateway running, `reef cron` goes through its control socket: a job added there
// runs on `reef cron run` and shows in `reef cron runs`.
func TestCronCLIThroughGateway(t *testing.T) {
	llm := newFake(t, fake.Reply{Text: "did the thing"})
	home := newHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	e := withFake(home, llm)
	g := startGateway(t, e)
	add := reef(t, e, "", "cron", "add", "-name", "hourly", "-every", "1h", "-isolated", "-text", "do the thing")
	if add.code != 0 {
		t.Fatalf("cron add = %d\n%s%s", add.code, add.stdout, add.stderr)
	}
	id := regexp.MustCompile(`added ([0-9a-f]+)`).FindStringSubmatch(add.stdout)[1]
	if res := reef(t, e, "", "cron", "run", id); res.code != 0 {
		t.Fatalf("cron run = %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(llm.Script().Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the job did not reach the model")
		}
		time.Sleep(10 * time.Millisecond) // bounded polling of the fake server
	}
	runs := reef(t, e, "", "cron", "runs", id)
	if runs.code != 0 || !strings.Contains(runs.stdout, "manual") {
		t.Errorf("cron runs = %d\n%s%s", runs.code, runs.stdout, runs.stderr)
	}
	if code := g.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
}

func TestTimerSettings(t *testing.T) {
	cfg := &configs.Config{Cron: configs.CronConfig{MaxJobsPerAgent: 7}, Agents: []configs.AgentConfig{
		{ID: "main", Heartbeat: configs.HeartbeatConfig{Every: "1h", ActiveHours: &configs.ActiveHoursConfig{Start: "09:00", End: "17:00", TZ: "Asia/Tokyo"}}},
		{ID: "quiet", Heartbeat: configs.HeartbeatConfig{Every: "off"}},
	}}
	set := timerSettings(cfg)
	main, quiet := set.Heartbeats["main"], set.Heartbeats["quiet"]
	if set.MaxJobsPerAgent != 7 || main.Every != time.Hour || main.ActiveZone.String() != "Asia/Tokyo" || main.ActiveStart != "09:00" {
		t.Errorf("settings = %+v, main = %+v", set, main)
	}
	if quiet.Every >= 0 {
		t.Errorf("heartbeat off: every = %v, want disabled", quiet.Every)
	}
}
