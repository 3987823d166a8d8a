//go:build linux

package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// The proxy counts every byte each way.
func TestPGProxyCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // an echo server
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	p, err := startPGProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	msg := strings.Repeat("x", 100_000)
	go c.Write([]byte(msg))
	got := make([]byte, len(msg))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	c.Close()
	p.Close()
	if up, down := p.toServer.Load(), p.toClient.Load(); up != int64(len(msg)) || down != int64(len(msg)) {
		t.Errorf("counted %d bytes up and %d down; want %d each", up, down, len(msg))
	}
}

// A small cluster run on PostgreSQL: three nodes, Telegram and Discord chats, node 1 killed and
// restarted; it exits 0 only when every message got exactly one reply, the takeovers came
// within the bound and the database check passed.
func TestBenchClusterSmall(t *testing.T) {
	url := pgtest.URL(t)
	if testing.Short() {
		t.Skip("starts three gateways")
	}
	out, stdout, code := benchCommandSplit(t, 4*time.Minute, "cluster", "-reef", binaries(t)+"/reef", "-database-url", url,
		"-chats", "8", "-messages", "24", "-partitions", "16", "-lease-seconds", "4", "-kill-at", "0.3", "-idle", "1s")
	if code != 0 {
		t.Fatalf("reef-bench cluster exited %d:\n%s", code, out)
	}
	for _, want := range []string{"every message has exactly one reply", "SIGKILL of n1", "partitions held by the others after", "per message:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, stdout)
		}
	}
}

// The Discord session is one unit, or one per shard once sharded.
func TestDiscordHeldBy(t *testing.T) {
	for _, c := range []struct {
		work      map[string]string
		all, none bool
	}{
		{map[string]string{"channel:telegram:default": "n1"}, false, false},
		{map[string]string{"channel:discord:default": "n1"}, true, false},
		{map[string]string{"channel:discord:default": "n2"}, false, true},
		{map[string]string{"channel:discord:default:shard:0": "n1", "channel:discord:default:shard:1": "n2"}, false, false},
		{map[string]string{"channel:discord:default:shard:0": "n3", "channel:discord:default:shard:1": "n2"}, false, true},
		{map[string]string{"channel:discord:defaultx": "n1"}, false, false},
	} {
		if all, none := discordHeldBy(c.work, "n1"); all != c.all || none != c.none {
			t.Errorf("%v: all %v none %v; want %v %v", c.work, all, none, c.all, c.none)
		}
	}
}
