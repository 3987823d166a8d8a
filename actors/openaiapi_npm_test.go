package actors_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/openaiapi"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// The official openai npm client, pinned; .ci/run installs the same version into
// testdata/npm. (7.x needs node 22; Debian's node is 20.)
const (
	openaiNpmVersion = "6.49.0"
	openaiNpmDir     = "testdata/npm"
)

// openaiClient returns node and the npm directory holding the openai client, installing it
// when missing. Without node the test is skipped, unless REEF_REQUIRE_NODE is set (CI sets
// it: there the test must run).
func openaiClient(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("REEF_REQUIRE_NODE") != "" {
			t.Fatal("node is not installed, and REEF_REQUIRE_NODE says this test must run")
		}
		t.Skip("skipped: node is not installed (the test runs the openai npm client)")
	}
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(openaiNpmDir, "node_modules", "openai", "package.json"))
	if err != nil || json.Unmarshal(raw, &pkg) != nil || pkg.Version != openaiNpmVersion {
		t.Logf("installing openai@%s into %s", openaiNpmVersion, openaiNpmDir)
		cmd := exec.Command("npm", "install", "--prefix", openaiNpmDir, "--no-save", "--no-audit", "--no-fund",
			"--loglevel=error", "openai@"+openaiNpmVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install openai: %v\n%s", err, out)
		}
	}
	return node, openaiNpmDir
}

// A third-party client, the official openai npm package, against the API on the real
// runtime: models, a non-streamed and a streamed completion with usage, the session
// continuing across the two requests of one user, two stateless chats at once that carry
// their system prompt and history and leave no session, an image part reaching a vision
// model, an unknown model's error.
func TestOpenAIAPIWithNpmClient(t *testing.T) {
	node, dir := openaiClient(t)
	r := newAPIRig(t, func(d *actors.Deps) { d.Agents[0].Vision = true })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "testdata/openai_client.mjs", r.srv.URL+"/v1", dir)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("openai client: %v\n%s\n%s", err, out, stderr)
	}
	type usage struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
	}
	type answer struct {
		Content string
		Finish  string
		Usage   *usage
	}
	var got struct {
		Models []string
		First  answer
		Stream struct {
			answer
			Chunks int
		}
		Stateless    []string
		Image        string
		UnknownModel struct {
			Status int
			Code   string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %s: %v", out, err)
	}
	want := answer{Content: "echo hello (message 1)", Finish: "stop", Usage: &usage{11, 5, 16}}
	if d := cmp.Diff(want, got.First); d != "" {
		t.Errorf("non-streamed (-want +got):\n%s", d)
	}
	want = answer{Content: "echo again (message 2)", Finish: "stop", Usage: &usage{11, 5, 16}}
	if d := cmp.Diff(want, got.Stream.answer); d != "" {
		t.Errorf("streamed, same user (-want +got):\n%s", d)
	}
	if got.Stream.Chunks < 3 {
		t.Errorf("stream of %d chunks, want role, content, finish and usage", got.Stream.Chunks)
	}
	if d := cmp.Diff([]string{"reef/main", "reef/work"}, got.Models); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
	wantStateless := []string{
		"system=You are terse. | user=My name is Ann. | assistant=Hello Ann. | user=recall",
		"system=You are terse. | user=My name is Bob. | assistant=Hello Bob. | user=recall",
	}
	if d := cmp.Diff(wantStateless, got.Stateless); d != "" {
		t.Errorf("two stateless chats at once, with a system prompt and history (-want +got):\n%s", d)
	}
	if keys := r.sessions(t); !slices.Equal(keys, []string{"agent:main:openai:direct:npm-image", "agent:main:openai:direct:npm-user"}) {
		t.Errorf("sessions stored %v, want only the two durable ones", keys)
	}
	var image []byte
	for _, req := range r.script.Requests() {
		for _, m := range req.Messages {
			for _, md := range m.Media {
				image = append(image, md.Data...)
			}
		}
	}
	if want := "\x89PNG\r\n\x1a\n npm cat"; string(image) != want || !strings.Contains(got.Image, "[image: inbox/") {
		t.Errorf("the image part: the vision model got %q (want %q), answered %q", image, want, got.Image)
	}
	if got.UnknownModel.Status != 404 || got.UnknownModel.Code != "model_not_found" {
		t.Errorf("unknown model: %+v", got.UnknownModel)
	}
}

// runNodeScript runs a script of testdata with the openai npm client against the API and
// decodes what it printed into v.
func runNodeScript(t *testing.T, r *apiRig, script string, v any, env ...string) {
	t.Helper()
	node, dir := openaiClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", script), r.srv.URL+"/v1", dir)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s: %v\n%s\n%s", script, err, out, stderr)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s printed %s: %v", script, out, err)
	}
}

// Client tools through the official openai npm client: a durable round trip not streamed, a
// stateless one streamed, and the SDK's own tool loop (runTools), each ending with the answer
// the model gave on the client's result.
func TestOpenAIAPIClientToolsWithNpmClient(t *testing.T) {
	r := newAPIRigWith(t, apiRigOpts{respond: clientToolModel})
	var got struct {
		Durable   struct{ Finish, Name, Args, Answer, ID string }
		Stateless struct {
			Finish, Answer, Finish2 string
			Calls                   []string
		}
		RunTools string
	}
	runNodeScript(t, r, "openai_tools.mjs", &got)
	if d := got.Durable; d.Finish != "tool_calls" || d.Name != "lookup" || d.Args != `{"q":"x"}` || d.Answer != "results: "+d.ID+"=42" {
		t.Errorf("durable round trip: %+v", d)
	}
	if s := got.Stateless; s.Finish != "tool_calls" || !slices.Equal(s.Calls, []string{"lookup"}) || s.Answer != "results: c_1=42" || s.Finish2 != "stop" {
		t.Errorf("stateless streamed round trip: %+v", s)
	}
	if got.RunTools != "results: c_1=found x" {
		t.Errorf("runTools' final content %q", got.RunTools)
	}
	if keys := r.sessions(t); !slices.Equal(keys, []string{"agent:main:openai:direct:npm-tools"}) {
		t.Errorf("sessions stored %v, want only the durable one", keys)
	}
}

// The Responses API through the official openai npm client: a function tool round trip whose
// result continues the response by previous_response_id, the SDK's stream helper accepting
// reef's events, a streamed call, a stateless response, and an unknown previous response.
func TestOpenAIAPIResponsesWithNpmClient(t *testing.T) {
	r := newAPIRigWith(t, apiRigOpts{respond: clientToolModel})
	var got struct {
		Call   struct{ Status, Name, Args, Text string }
		Answer struct {
			Text, CallID string
			Usage        struct {
				Input  int `json:"input_tokens"`
				Output int `json:"output_tokens"`
				Total  int `json:"total_tokens"`
			}
		}
		Stream struct {
			Types        []string
			Text, Status string
		}
		StreamedCalls []string
		Stateless     string
		Unknown       struct {
			Status int
			Code   string
		}
	}
	runNodeScript(t, r, "openai_responses.mjs", &got)
	if c := got.Call; c.Status != "completed" || c.Name != "lookup" || c.Args != `{"q":"x"}` || c.Text != "Let me look." {
		t.Errorf("the call: %+v", c)
	}
	if a := got.Answer; a.Text != "results: "+a.CallID+"=42" || a.Usage.Input != 10 || a.Usage.Output != 2 || a.Usage.Total != 12 {
		t.Errorf("the answer on the call's output: %+v", a)
	}
	wantTypes := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if d := cmp.Diff(wantTypes, got.Stream.Types); d != "" || got.Stream.Text != "offered lookup: false" || got.Stream.Status != "completed" {
		t.Errorf("stream %+v (-want +got types):\n%s", got.Stream, d)
	}
	if !slices.Equal(got.StreamedCalls, []string{"lookup"}) {
		t.Errorf("streamed calls %v", got.StreamedCalls)
	}
	if got.Stateless != "results: c_9=7" {
		t.Errorf("stateless response %q", got.Stateless)
	}
	if got.Unknown.Status != 404 || got.Unknown.Code != "previous_response_not_found" {
		t.Errorf("unknown previous response: %+v", got.Unknown)
	}
	keys := r.sessions(t)
	if len(keys) != 2 {
		t.Fatalf("sessions %v, want the conversation previous_response_id continued and the streamed call's", keys)
	}
	var users int
	for _, k := range keys {
		var entries []persistence.Entry
		if err := r.store.View(func(rd persistence.Reader) (err error) { entries, err = rd.Messages(k, 0); return err }); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Role == messages.RoleUser {
				users++
			}
		}
		if len(entries) == 6 { // look up, call, result, answer, hello, answer
			return
		}
	}
	t.Errorf("no session holds the continued conversation (%d user entries in all)", users)
}

// Per-key access through the official openai npm client: the key lists only its agent,
// reaches its own session (with a guest's tools: no exec), and gets 404 for another agent's
// model, another key's session and the owner's; a wrong key is 401.
func TestOpenAIAPIKeysWithNpmClient(t *testing.T) {
	const key = "n8n-key-0123456789abcdef"
	r := newAPIRigWith(t, apiRigOpts{api: func(c *openaiapi.Config) {
		c.Token = "gateway-token-0123456789"
		c.Keys = []openaiapi.Key{{Name: "n8n", Key: key, Agents: []string{"work"}}, {Name: "zap", Key: "zap-key-0123456789abcdef", Agents: []string{"work"}}}
	}})
	type refusal struct {
		Status int
		Code   string
	}
	var got struct {
		Models                                         []string
		Own                                            string
		OtherModel, OtherSession, OwnerSession, BadKey refusal
	}
	runNodeScript(t, r, "openai_keys.mjs", &got, "REEF_KEY="+key)
	if !slices.Equal(got.Models, []string{"reef/work"}) || got.Own != "echo hello (message 1)" {
		t.Errorf("the key's models %v, its answer %q", got.Models, got.Own)
	}
	for name, c := range map[string]struct{ got, want refusal }{
		"another agent's model": {got.OtherModel, refusal{404, "model_not_found"}},
		"another key's session": {got.OtherSession, refusal{404, "session_not_found"}},
		"the owner's session":   {got.OwnerSession, refusal{404, "session_not_found"}},
		"a wrong key":           {got.BadKey, refusal{401, "invalid_api_key"}},
	} {
		if c.got != c.want {
			t.Errorf("%s: %+v, want %+v", name, c.got, c.want)
		}
	}
	if keys := r.sessions(t); !slices.Equal(keys, []string{"agent:work:openai:direct:n8n.ann"}) {
		t.Errorf("sessions %v, want the key's own under its prefix", keys)
	}
	reqs := r.script.Requests()
	if len(reqs) != 1 || slices.Contains(reqs[0].Tools, "exec") || !slices.Contains(reqs[0].Tools, "read") {
		t.Errorf("a key's request runs with a guest's tools; offered %v", reqs[len(reqs)-1].Tools)
	}
}

// The JavaScript examples of docs/api.md run as written against the API (the import and the
// URL pointed at the test's), with a model that calls the client's tool weather when offered
// and answers its result.
func TestOpenAIAPIDocsExamples(t *testing.T) {
	node, dir := openaiClient(t)
	r := newAPIRigWith(t, apiRigOpts{respond: func(req fakellm.Request) fakellm.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == messages.RoleTool:
			return fakellm.Reply{Text: "It is " + resultText(last.Content) + "."}
		case slices.Contains(req.Tools, "weather"):
			return fakellm.Reply{ToolCalls: []messages.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}}}
		}
		return fakellm.Reply{Text: "ok"}
	}})
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(doc), "```js\n")[1:] {
		blocks = append(blocks, part[:strings.Index(part, "```")])
	}
	if len(blocks) < 2 {
		t.Fatalf("docs/api.md has %d js examples", len(blocks))
	}
	abs, _ := filepath.Abs(dir)
	var script strings.Builder
	script.WriteString("import { createRequire } from \"node:module\";\nconst require = createRequire(" + strconv.Quote(filepath.Join(abs, "package.json")) + ");\n")
	for _, b := range blocks { // the one that makes the client first, at the top level; the others each in a block
		if strings.Contains(b, "import OpenAI") {
			b = strings.Replace(b, `import OpenAI from "openai";`, `const OpenAI = require("openai").default ?? require("openai");`, 1)
			script.WriteString(strings.ReplaceAll(b, "http://127.0.0.1:18789/v1", r.srv.URL+"/v1"))
		}
	}
	for _, b := range blocks {
		if !strings.Contains(b, "import OpenAI") {
			script.WriteString("{\n" + b + "}\n")
		}
	}
	file := filepath.Join(t.TempDir(), "docs.mjs")
	if err := os.WriteFile(file, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "REEF_GATEWAY_TOKEN=test-token"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the docs' examples: %v\n%s\n%s", err, out, script.String())
	}
	if got := strings.TrimSpace(string(out)); got != "It is 12°C, rain." {
		t.Errorf("the Responses example printed %q", got)
	}
}
