package main

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/providers/fake"
)

// TestPipedChatFailsWhenARunFails: a script can tell that no answer came: reef chat exits
// non-zero and says why on stderr; the reply on stdout says it too.
func TestPipedChatFailsWhenARunFails(t *testing.T) {
	home := newHome(t)
	e := env{"REEF_HOME": home, "HOME": home, "OPENAI_API_KEY": canary, "REEF_MODEL": "openai/test-model",
		"OPENAI_BASE_URL": "http://" + freeAddr(t) + "/v1"} // nothing listens there
	res := reef(t, e, "hi\n", "chat")
	if res.code == 0 {
		t.Errorf("reef chat against an unreachable model exited 0; stdout %q, stderr %q", res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "reef: the run failed:") || !strings.Contains(res.stderr, "connection refused") {
		t.Errorf("stderr = %q, want the reason", res.stderr)
	}
	if strings.Contains(res.stderr, canary) || strings.Contains(res.stdout, canary) {
		t.Error("the API key was printed")
	}

	// The same conversation with a model that answers: exit 0 again.
	srv := newFake(t, fake.Reply{Text: "hello"})
	if res := reef(t, withFake(home, srv), "hi\n", "chat"); res.code != 0 || res.stdout != "hello\n" {
		t.Errorf("reef chat = %d, stdout %q, stderr %q; want 0 and the reply", res.code, res.stdout, res.stderr)
	}
}
