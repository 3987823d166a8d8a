package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/persistence/postgres/pgtest"
)

// webNode is a cluster node of a relay test: its web listener and token.
type webNode struct {
	*node
	home, url, token string
}

func startWebNode(t *testing.T, llm *echoLLM, yaml string) *webNode {
	t.Helper()
	home, e := writeConfig(t, llm.srv, yaml)
	n := &webNode{node: newNode(t, e), home: home}
	m := webURLLine.FindStringSubmatch(n.cur.stderr.String())
	if m == nil {
		t.Fatalf("no web UI address in the log:\n%s", n.cur.stderr)
	}
	n.url, n.token = m[1], web.ReadToken(filepath.Join(home, "data"))
	return n
}

func (n *webNode) request(ctx context.Context, method, path, body string, header ...string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, method, n.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+n.token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return http.DefaultClient.Do(req)
}

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// readSSE sends the events of body to out until it ends.
func readSSE(body io.Reader, out chan<- sseEvent) {
	defer close(out)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" {
				out <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[len("data: "):]
		}
	}
}

// onNode returns n names, made by name(i), whose session keys (key(name)) are in
// partitions owner holds.
func onNode(t *testing.T, owners map[int]string, partitions int, owner string, n int, name func(int) string, key func(string) string) []string {
	t.Helper()
	var out []string
	for i := 0; len(out) < n && i < 10000; i++ {
		if owners[cluster.Partition(key(name(i)), partitions)] == owner {
			out = append(out, name(i))
		}
	}
	if len(out) < n {
		t.Fatalf("no %d names on %s: owners %v", n, owner, owners)
	}
	return out
}

// TestE2EClusterRelay: two nodes in cluster mode. WebChat pages and OpenAI-compatible API
// requests go to node n1 for sessions whose partitions n2 holds (and, as a control, one n1
// holds): the run happens on n2, and n1's page streams the answer's text as it is written
// and gets the reply once; n1's API requests, streamed and not, chat completions and
// responses, get the answer once, as on one node.
func TestE2EClusterRelay(t *testing.T) {
	url := pgtest.URL(t)
	const partitions, lease = 16, 4
	llm := newEchoLLM(t, 20*time.Millisecond, nil)
	// One workspace for both, as a cluster's shared volume: WebChat's uploads wait there.
	shared := fmt.Sprintf("agents:\n  - id: main\n    model: openai/test-model\n    workspace: %s\n", t.TempDir())
	n1 := startWebNode(t, llm, postgresYAML(url)+clusterYAML("n1", partitions, lease)+shared)
	n2 := startWebNode(t, llm, postgresYAML(url)+clusterYAML("n2", partitions, lease)+shared)
	if !eventually(time.Minute, func() bool { o := leaseOwners(t, url); return o["n1"] == partitions/2 && o["n2"] == partitions/2 }) {
		t.Fatalf("partitions not spread: %v", leaseOwners(t, url))
	}
	owners := partitionOwners(t, url)
	logs := func() string { return "n1:\n" + tail(n1.logs(), 3000) + "\nn2:\n" + tail(n2.logs(), 3000) }

	t.Run("webchat", func(t *testing.T) {
		chatKey := func(c string) string { return "agent:main:webchat:direct:" + c }
		chats := append(onNode(t, owners, partitions, "n2", 2, func(i int) string { return fmt.Sprintf("w%d", i) }, chatKey),
			onNode(t, owners, partitions, "n1", 1, func(i int) string { return fmt.Sprintf("w%d", i) }, chatKey)...)
		for _, chat := range chats {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			resp, err := n1.request(ctx, "GET", "/chat/events?c="+chat, "")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("/chat/events: %v %v", resp, err)
			}
			evs := make(chan sseEvent, 256)
			go readSSE(resp.Body, evs)
			marker := tok("web"+chat, 0)
			r, err := n1.request(ctx, "POST", "/chat/send", fmt.Sprintf(`{"chat":%q,"text":"hello %s"}`, chat, marker))
			if err != nil || r.StatusCode != 202 {
				t.Fatalf("/chat/send: %v %v", r, err)
			}
			r.Body.Close()
			var deltas strings.Builder
			var replies []string
		read:
			for {
				select {
				case ev, ok := <-evs:
					if !ok {
						break read
					}
					switch ev.name {
					case "delta":
						var d struct{ Text string }
						json.Unmarshal([]byte(ev.data), &d)
						deltas.WriteString(d.Text)
					case "chat":
						var c struct{ Kind, Text, Chat string }
						json.Unmarshal([]byte(ev.data), &c)
						if c.Chat != chat {
							t.Errorf("chat %s's page got an event of chat %s", chat, c.Chat)
						}
						if c.Kind == "reply" {
							replies = append(replies, c.Text)
						}
						if c.Kind == "final" {
							break read
						}
					}
				case <-ctx.Done():
					break read
				}
			}
			cancel()
			resp.Body.Close()
			where := owners[cluster.Partition(chatKey(chat), partitions)]
			want := replyTo(marker)
			if len(replies) != 1 || replies[0] != want || deltas.String() != want {
				t.Fatalf("chat %s (runs on %s), page on n1: replies %q, streamed %q; want %q once\n%s", chat, where, replies, deltas.String(), want, logs())
			}
		}
	})

	t.Run("upload", func(t *testing.T) {
		// A file sent to n1 with a message of a chat n2 runs: n2 fetches it.
		chat := onNode(t, owners, partitions, "n2", 1, func(i int) string { return fmt.Sprintf("u%d", i) },
			func(c string) string { return "agent:main:webchat:direct:" + c })[0]
		marker := tok("upload", 0)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("chat", chat)
		mw.WriteField("text", "read the notes "+marker)
		fw, _ := mw.CreateFormFile("file", "notes.txt")
		fw.Write([]byte("the notes say hello\n"))
		mw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := n1.request(ctx, "POST", "/chat/send", body.String(), "Content-Type", mw.FormDataContentType())
		if err != nil || r.StatusCode != 202 {
			t.Fatalf("/chat/send with a file: %v %v", r, err)
		}
		r.Body.Close()
		var asked string
		if !eventually(30*time.Second, func() bool {
			for _, req := range llm.srv.Script().Requests() {
				if u := lastUser(req); strings.Contains(u, marker) {
					asked = u
					return true
				}
			}
			return false
		}) {
			t.Fatalf("the model was not asked about %s\n%s", marker, logs())
		}
		if !strings.Contains(asked, "inbox/") || !strings.Contains(asked, "notes.txt") || strings.Contains(asked, "not downloaded") {
			t.Fatalf("the run on n2 did not get the file sent to n1; the model saw:\n%s\n%s", asked, logs())
		}
	})

	t.Run("api", func(t *testing.T) {
		apiKey := func(s string) string { return "agent:main:openai:direct:" + s }
		names := append(onNode(t, owners, partitions, "n2", 6, func(i int) string { return fmt.Sprintf("s%d", i) }, apiKey),
			onNode(t, owners, partitions, "n1", 1, func(i int) string { return fmt.Sprintf("s%d", i) }, apiKey)...)
		var wg sync.WaitGroup // the sessions at once, so their runs' messages share the relay's batches
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j, mode := range []string{"chat", "chat-stream", "responses", "responses-stream"} { // a session's in turn
					marker := tok("api"+name, j)
					got, err := askAPI(n1, mode, name, "hello "+marker)
					where := owners[cluster.Partition(apiKey(name), partitions)]
					if want := replyTo(marker); err != nil || got != want {
						t.Errorf("%s %s (session %d, runs on %s) via n1: %q, %v; want %q\n%s", mode, name, i, where, got, err, want, logs())
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// askAPI sends one request of mode to node n for the session name, and returns the answer's
// text: the content, or the streamed deltas put together.
func askAPI(n *webNode, mode, name, text string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := strings.HasSuffix(mode, "-stream")
	var path, body string
	if strings.HasPrefix(mode, "chat") {
		path = "/v1/chat/completions"
		body = fmt.Sprintf(`{"model":"reef/main","stream":%v,"messages":[{"role":"user","content":%q}]}`, stream, text)
	} else {
		path = "/v1/responses"
		body = fmt.Sprintf(`{"model":"reef/main","stream":%v,"input":%q}`, stream, text)
	}
	resp, err := n.request(ctx, "POST", path, body, "X-Reef-Session", name)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	if !stream {
		var v struct {
			Choices []struct{ Message struct{ Content string } }
			Output  []struct{ Content []struct{ Text string } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			return "", err
		}
		if len(v.Choices) == 1 {
			return v.Choices[0].Message.Content, nil
		}
		if len(v.Output) == 1 && len(v.Output[0].Content) == 1 {
			return v.Output[0].Content[0].Text, nil
		}
		return "", fmt.Errorf("an answer of an unexpected shape: %+v", v)
	}
	evs := make(chan sseEvent, 256)
	go readSSE(resp.Body, evs)
	var b strings.Builder
	for ev := range evs {
		if ev.data == "[DONE]" {
			break
		}
		var v struct {
			Choices []struct{ Delta struct{ Content string } }
			Type    string
			Delta   string
		}
		json.Unmarshal([]byte(ev.data), &v)
		switch {
		case len(v.Choices) == 1:
			b.WriteString(v.Choices[0].Delta.Content)
		case v.Type == "response.output_text.delta":
			b.WriteString(v.Delta)
		case v.Type == "response.completed":
			return b.String(), nil
		}
	}
	return b.String(), ctx.Err()
}
