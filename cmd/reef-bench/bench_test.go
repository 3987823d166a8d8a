//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The tests build reef and reef-bench with go build, once, into one directory (reef beside
// reef-bench, where reef-bench looks for it), and run reef-bench as users do.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries builds reef and reef-bench and returns the directory that holds them.
func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "reef-bench-test-"); buildErr != nil {
			return
		}
		for _, name := range []string{"reef", "reef-bench"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "github.com/reefgw/reef/cmd/"+name).CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// benchCommand runs `reef-bench args...` (built by binaries) and returns its output (stdout
// and stderr together) and exit code.
func benchCommand(t *testing.T, limit time.Duration, args ...string) (string, int) {
	t.Helper()
	out, _, code := benchCommandSplit(t, limit, args...)
	return out, code
}

// benchCommandSplit is benchCommand with stdout apart: it returns everything, stdout, code.
func benchCommandSplit(t *testing.T, limit time.Duration, args ...string) (all, stdout string, code int) {
	t.Helper()
	dir := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "reef-bench"), args...)
	cmd.WaitDelay = 5 * time.Second
	var both, out syncBuffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&both, &out), &both
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return both.String(), out.String(), 0
	case errors.As(err, &exit) && ctx.Err() == nil:
		return both.String(), out.String(), exit.ExitCode()
	}
	t.Fatalf("reef-bench %s: %v\n%s", strings.Join(args, " "), err, both.String())
	return "", "", -1
}

// syncBuffer is a bytes.Buffer that two writers may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestHelp: -h and --help print usage on stdout and exit 0, for reef-bench and each
// subcommand; help names the flags; a bad flag exits 2.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"crash", "-h"}, {"soak", "--help"}, {floorCommand, "-h"}} {
		all, stdout, code := benchCommandSplit(t, 30*time.Second, args...)
		if code != 0 || !strings.Contains(stdout, "Usage:") || all != stdout {
			t.Errorf("reef-bench %s: exit %d, stdout:\n%s\nall:\n%s", strings.Join(args, " "), code, stdout, all)
		}
	}
	if _, stdout, _ := benchCommandSplit(t, 30*time.Second, "-h"); !strings.Contains(stdout, "-reef") || !strings.Contains(stdout, "-floor") {
		t.Errorf("reef-bench -h lacks the flags:\n%s", stdout)
	}
	for _, args := range [][]string{{"-no-such-flag"}, {"-json", "crash"}, {"crash", "-kills", "1", "extra"}} {
		if all, _, code := benchCommandSplit(t, 30*time.Second, args...); code != 2 || !strings.Contains(all, args[len(args)-1]) {
			t.Errorf("reef-bench %s: exit %d, want 2 and a message naming %s:\n%s", strings.Join(args, " "), code, args[len(args)-1], all)
		}
	}
}

// TestReefFlag: -reef names the binary to run; a path that is not a file is refused.
func TestReefFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	reef := filepath.Join(binaries(t), "reef")
	out, code := benchCommand(t, time.Minute, "-reef", reef, "-scenario", "burst", "-n", "5", "-json")
	if code != 0 || !strings.Contains(out, `"messages": 5`) {
		t.Errorf("-reef %s: exit %d:\n%s", reef, code, out)
	}
	if out, code := benchCommand(t, time.Minute, "-reef", t.TempDir(), "-scenario", "burst"); code != 1 || !strings.Contains(out, "not a file") {
		t.Errorf("-reef DIR: exit %d:\n%s", code, out)
	}
}

// TestBenchCrash runs the crash harness at a small size: chats talk to the gateway while it
// is SIGKILLed and restarted. No message may be lost, no run repeated after its reply was
// sent, the database must pass its check with nothing pending, and every tool call must have
// its result, and no reply may show twice (exit status 3): a reply is only ever delivered by
// editing a recorded draft, so delivering it again after a kill changes nothing.
func TestBenchCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several gateways")
	}
	out, code := benchCommand(t, 2*time.Minute, "crash", "-messages", "40", "-chats", "10", "-kills", "3")
	switch {
	case code == 0:
	default:
		t.Fatalf("reef-bench crash exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "40 messages from 10 chats") || !strings.Contains(out, "3 SIGKILLs") {
		t.Errorf("unexpected report:\n%s", out)
	}
}

// TestBenchBurstSmall runs one small scenario end to end and checks the report's shape.
func TestBenchBurstSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	out, code := benchCommand(t, time.Minute, "-scenario", "burst", "-n", "20", "-json")
	if code != 0 {
		t.Fatalf("reef-bench exit %d:\n%s", code, out)
	}
	for _, want := range []string{`"scenario": "burst"`, `"messages": 20`, `"lost": 0`, `"duplicated": 0`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
}

// TestBenchFloorSmall runs the burst against the floor gateway: every message answered once,
// by the model, through the fakes, and nothing else sent (reef, given 700 ms, would show a
// draft and edit it); and -floor refuses the scenarios it does not measure.
func TestBenchFloorSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	out, code := benchCommand(t, time.Minute, "-floor", "-n", "20", "-llm-latency", "700ms", "-json") // burst by default
	if code != 0 {
		t.Fatalf("reef-bench -floor exit %d:\n%s", code, out)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &res); err != nil || len(res) != 1 {
		t.Fatalf("report: %v\n%s", err, out)
	}
	r := res[0]
	if !r.Floor || r.Messages != 20 || r.Lost != 0 || r.Duplicated != 0 || r.LLMCalls != 20 {
		t.Errorf("floor burst: %+v", r)
	}
	if r.APICalls["sendMessage"] != 20 || r.APICalls["editMessageText"]+r.APICalls["sendChatAction"] != 0 {
		t.Errorf("floor burst made these Bot API calls: %v (want 20 sendMessage, no drafts or typing)", r.APICalls)
	}
	if out, code := benchCommand(t, time.Minute, "-floor", "-scenario", "chats"); code != 2 || !strings.Contains(out, "burst scenario only") {
		t.Errorf("-floor -scenario chats: exit %d:\n%s", code, out)
	}
}

// TestBenchChatsAtOnce sends each chat's messages all at once, under two queue modes: with
// followup every message gets its own run, in order; with collect the chat's messages share
// runs. Either way each message is answered once and in its chat's order.
func TestBenchChatsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gateways")
	}
	for _, tc := range []struct {
		mode      string
		callsWant func(int) bool
	}{
		{"followup", func(n int) bool { return n == 12 }},
		{"collect", func(n int) bool { return n >= 3 && n < 12 }},
	} {
		out, code := benchCommand(t, time.Minute, "-scenario", "chats", "-k", "3", "-m", "4", "-at-once", "-queue", tc.mode, "-json")
		if code != 0 {
			t.Fatalf("%s: reef-bench exit %d:\n%s", tc.mode, code, out)
		}
		var res []benchResult
		if err := json.Unmarshal([]byte(out[strings.IndexByte(out, '['):]), &res); err != nil || len(res) != 1 {
			t.Fatalf("%s: report %v:\n%s", tc.mode, err, out)
		}
		r := res[0]
		if !r.AtOnce || r.QueueMode != tc.mode || r.Messages != 12 || r.Lost != 0 || r.Duplicated != 0 || r.OutOfOrder != 0 {
			t.Errorf("%s: %+v, want 12 messages sent at once, none lost, doubled or out of order", tc.mode, r)
		}
		if !tc.callsWant(int(r.LLMCalls)) {
			t.Errorf("%s: %d model calls for 3 chats of 4 messages", tc.mode, r.LLMCalls)
		}
	}
}

// TestBenchSoakHeapProfile runs a short soak that saves the gateway's heap profiles.
func TestBenchSoakHeapProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	prefix := filepath.Join(t.TempDir(), "heap")
	out, code := benchCommand(t, time.Minute, "soak", "-duration", "4s", "-every", "1s", "-warmup", "2s", "-rate", "5", "-heapprofile", prefix)
	if code != 0 {
		t.Fatalf("reef-bench soak exit %d:\n%s", code, out)
	}
	for _, name := range []string{prefix + "-warmup.pb.gz", prefix + "-end.pb.gz"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b { // a profile is gzipped protobuf
			t.Errorf("%s: %d bytes, not a gzipped profile", name, len(b))
		}
	}
}

// TestBenchIdleSmall runs the idle scenario with a short window: the three channels connect
// to their fakes and the window's samples are reported.
func TestBenchIdleSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a gateway")
	}
	out, code := benchCommand(t, time.Minute, "-scenario", "idle", "-idle-for", "2s", "-json")
	if code != 0 {
		t.Fatalf("reef-bench exit %d:\n%s", code, out)
	}
	var res []benchResult
	if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &res); err != nil || len(res) != 1 {
		t.Fatalf("report: %v\n%s", err, out)
	}
	r := res[0]
	if r.Channels != "telegram, discord, feishu" || len(r.ConnectedMs) != 3 {
		t.Errorf("connected %q %v, want telegram, discord and feishu", r.Channels, r.ConnectedMs)
	}
	if r.IdleSamples != 3 || r.IdleForSeconds != 2 {
		t.Errorf("%d samples over %vs, want 3 over 2s (at 0, 1 and 2s)", r.IdleSamples, r.IdleForSeconds)
	}
	if r.IdleAnonMB < r.IdleLastAnonMB || r.IdleAnonMB <= 0 || r.IdlePssAnonMB <= 0 || r.IdlePSSMB < r.IdlePssAnonMB ||
		r.IdlePSSMB > r.IdleRSSMB+0.01 || r.IdleRSSMB < r.IdleAnonMB+r.IdleFileMB-0.01 || r.IdleFileMB <= 0 || r.PeakRSSMB < r.IdleRSSMB {
		t.Errorf("inconsistent memory: %+v", r.idleResult)
	}
}

func TestUnpairedToolCalls(t *testing.T) {
	call := func(seq uint64, ids ...string) persistence.Entry {
		e := persistence.Entry{Seq: seq, ChatMessage: messages.ChatMessage{Role: messages.RoleAssistant}}
		for _, id := range ids {
			e.ToolCalls = append(e.ToolCalls, messages.ToolCall{ID: id, Name: "ls"})
		}
		return e
	}
	result := func(seq uint64, id string) persistence.Entry {
		return persistence.Entry{Seq: seq, ChatMessage: messages.ChatMessage{Role: messages.RoleTool, ToolCallID: id}}
	}
	user := persistence.Entry{Seq: 1, ChatMessage: messages.ChatMessage{Role: messages.RoleUser, Content: "hi"}}
	answer := persistence.Entry{Seq: 9, ChatMessage: messages.ChatMessage{Role: messages.RoleAssistant, Content: "done"}}
	for _, tc := range []struct {
		name    string
		entries []persistence.Entry
		bad     bool
	}{
		{"paired", []persistence.Entry{user, call(2, "a", "b"), result(3, "b"), result(4, "a"), answer}, false},
		{"same id in two turns", []persistence.Entry{user, call(2, "a"), result(3, "a"), answer, user, call(5, "a"), result(6, "a"), answer}, false},
		{"missing result", []persistence.Entry{user, call(2, "a", "b"), result(3, "a"), answer}, true},
		{"dangling at the end", []persistence.Entry{user, call(2, "a")}, true},
		{"two results", []persistence.Entry{user, call(2, "a"), result(3, "a"), result(4, "a"), answer}, true},
		{"result without a call", []persistence.Entry{user, result(3, "a"), answer}, true},
	} {
		if got := unpairedToolCalls(tc.entries); (got != "") != tc.bad {
			t.Errorf("%s: unpairedToolCalls = %q, want bad=%v", tc.name, got, tc.bad)
		}
	}
}
