package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reefgw/reef/persistence/postgres/pgtest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2EClusterChatRelay: `reef chat` in cluster mode is a node of its own, and with one
// partition the gateway n1 keeps it: the terminal's session runs on n1. The replies reach
// the terminal (piped: each line's reply printed once; interactive: the answer), and a
// Ctrl-C stops the run on n1, whose "Stopped." the terminal shows.
func TestE2EClusterChatRelay(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease = 1, 4
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		last := lastUser(req)
		if strings.Contains(last, "hang") {
			return fake.Reply{Hang: true}
		}
		if m := tokenRE.FindString(last); m != "" {
			return fake.Reply{Text: replyTo(m)}
		}
		return fake.Reply{Text: "ok"}
	}
	llm := openaitest.NewServer(script)
	t.Cleanup(llm.Close)
	yaml := func(id string) string { return postgresYAML(url) + clusterYAML(id, partitions, lease) }
	_, e1 := writeConfig(t, llm, yaml("n1"))
	n1 := newNode(t, e1)
	if !eventually(time.Minute, func() bool { return leaseOwners(t, url)["n1"] == partitions }) {
		t.Fatalf("n1 holds no partition: %v", leaseOwners(t, url))
	}
	_, ec := writeConfig(t, llm, yaml("c1"))

	res := reef(t, ec, "hello "+tok("chat", 0)+"\nhello "+tok("chat", 1)+"\n", "chat")
	for i := range 2 {
		if want := replyTo(tok("chat", i)); res.code != 0 || strings.Count(res.stdout, want) != 1 {
			t.Fatalf("piped reef chat = %d, stdout %q; want %q once\nstderr:\n%s\nn1:\n%s", res.code, res.stdout, want, tail(res.stderr, 3000), tail(n1.logs(), 3000))
		}
	}
	if o := leaseOwners(t, url); o["n1"] != partitions {
		t.Fatalf("the partition moved: %v; the test proves nothing", o)
	}

	c := startInteractive(t, ec)
	c.waitFor("tty", c.tty, "› ")
	c.master.WriteString("hello " + tok("chat", 2) + "\n")
	c.waitFor("tty", c.tty, replyTo(tok("chat", 2)))
	if !eventually(15*time.Second, func() bool { // the run's end (the prompt again), relayed after the reply
		out := c.tty.String()
		return strings.Contains(out[strings.LastIndex(out, replyTo(tok("chat", 2))):], "› ")
	}) {
		t.Fatalf("no prompt after the reply: %q", c.tty)
	}
	asked := len(script.Requests())
	c.master.WriteString("please hang\n")
	if !eventually(15*time.Second, func() bool { return len(script.Requests()) > asked }) {
		t.Fatalf("the model was not asked; stderr: %q", c.stderr)
	}
	c.running()
	c.signal(syscall.SIGINT)
	c.waitFor("tty", c.tty, "(stopping the run — press Ctrl-C again to exit)")
	c.waitFor("tty", c.tty, "\nStopped.\n")
	c.master.WriteString("\x04")
	if err := c.exit(15 * time.Second); err != nil {
		t.Errorf("reef chat after Ctrl-D: %v; stderr: %q", err, c.stderr)
	}
	if o := leaseOwners(t, url); o["n1"] != partitions {
		t.Errorf("the partition moved: %v; the test proves nothing", o)
	}
}
