package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels/telegram/telegramtest"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// TestE2EClusterApproveAcrossNodes: two `reef gateway` nodes with exec approvals "always".
// One owner's run, on one node, calls exec and waits; the request goes to the first owner's
// Telegram chat, whose session the other node runs, and the /approve typed there reaches the
// waiting run: the command runs once, its result is answered once, one audit record.
func TestE2EClusterApproveAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease = 16, 4
	script := fake.NewScript()
	script.Respond = func(req fake.Request) fake.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == messages.RoleTool:
			return fake.Reply{Text: "ran: " + last.Content}
		case strings.Contains(last.Content, "run it"):
			return fake.Reply{ToolCalls: []messages.ToolCall{{ID: "x1", Name: "exec", Arguments: `{"command":"echo e2e-approved"}`}}}
		}
		return fake.Reply{Text: "hello"}
	}
	srv := openaitest.NewServer(script)
	t.Cleanup(srv.Close)
	tg := telegramtest.NewWithToken(t, tgToken)
	var candidates []string
	for c := range 16 {
		candidates = append(candidates, fmt.Sprintf("%q", fmt.Sprint(8500+c)))
	}
	var nodes []*node
	for _, id := range []string{"n1", "n2"} {
		_, e := writeConfig(t, srv, telegramYAML(tg.URL, "allowFrom: ["+strings.Join(candidates, ", ")+"]")+
			"tools:\n  exec:\n    approvals: always\n"+postgresYAML(url)+clusterYAML(id, partitions, lease))
		nodes = append(nodes, newNode(t, e))
	}
	if !eventually(time.Minute, func() bool { o := leaseOwners(t, url); return o["n1"] == partitions/2 && o["n2"] == partitions/2 }) {
		t.Fatalf("partitions not spread: %v", leaseOwners(t, url))
	}
	// The owner asked is the first in allowFrom with a chat: 8500. The run is another owner's
	// whose session the other node runs.
	owners := partitionOwners(t, url)
	nodeOf := func(chat int64) string {
		return owners[cluster.Partition(fmt.Sprintf("agent:main:telegram:direct:%d", chat), partitions)]
	}
	asked, asker := int64(8500), int64(0)
	for c := int64(8501); c < 8516 && asker == 0; c++ {
		if nodeOf(c) != nodeOf(asked) {
			asker = c
		}
	}
	if asker == 0 {
		t.Fatalf("every candidate chat runs on %s", nodeOf(asked))
	}
	logs := func() string { return "n1:\n" + tail(nodes[0].logs(), 3000) + "\nn2:\n" + tail(nodes[1].logs(), 3000) }
	tg.UserSays(asked, asked, "hi")
	if !eventually(30*time.Second, func() bool { return slices.Contains(tg.Sent(asked), "hello") }) {
		t.Fatalf("no hello: %q\n%s", tg.Sent(asked), logs())
	}
	tg.UserSays(asker, asker, "please run it")
	idRE := regexp.MustCompile(`Approval needed \[([A-Z0-9]{6})\]`)
	var id string
	if !eventually(30*time.Second, func() bool {
		for _, text := range tg.Sent(asked) {
			if m := idRE.FindStringSubmatch(text); m != nil {
				id = m[1]
			}
		}
		return id != ""
	}) {
		t.Fatalf("no request in chat %d: %q\n%s", asked, tg.Sent(asked), logs())
	}
	tg.UserSays(asked, asked, "/approve "+id)
	ran := func() int {
		n := 0
		for _, text := range tg.Sent(asker) {
			if strings.Contains(text, "ran: ") && strings.Contains(text, "e2e-approved") {
				n++
			}
		}
		return n
	}
	if !eventually(30*time.Second, func() bool { return ran() == 1 }) {
		t.Fatalf("the run on %s did not go on after /approve on %s: %q\n%s", nodeOf(asker), nodeOf(asked), tg.Sent(asker), logs())
	}
	if !eventually(10*time.Second, func() bool {
		return slices.ContainsFunc(tg.Sent(asked), func(s string) bool { return strings.HasPrefix(s, "Approved "+id) })
	}) {
		t.Errorf("the owner was not told: %q", tg.Sent(asked))
	}
	time.Sleep(2 * time.Second) // a second run of the command or answer would have come by now
	for _, n := range nodes {
		n.stop()
	}
	if n := ran(); n != 1 {
		t.Errorf("chat %d shows the command's result %d times; want once: %q", asker, n, tg.Sent(asker))
	}
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ds []access.ExecDecision
	if err := st.View(func(r persistence.Reader) error {
		var err error
		ds, err = access.ExecDecisions(r, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != id || ds[0].Decision != access.DecisionApproved || ds[0].By != fmt.Sprintf("telegram:%d", asked) {
		t.Errorf("audit %+v; want one approval by telegram:%d", ds, asked)
	}
	checkSettledPostgres(t, url)
}
