package actors_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	fakellm "github.com/reefgw/reef/providers/fake"
)

// clientToolModel answers as a model offered the client's tool lookup would: a user message
// "look up" calls it (with the text it wrote first), "both" calls it beside the agent's own
// read, "twice" calls it twice, "refuse" answers in text unless a note asks for the call;
// a tool result is answered with what it said; anything else is answered with the tools
// offered.
func clientToolModel(r fakellm.Request) fakellm.Reply {
	last := r.Messages[len(r.Messages)-1]
	usage := messages.Usage{InputTokens: 10, OutputTokens: 2}
	lookup := func(id string) messages.ToolCall {
		return messages.ToolCall{ID: id, Name: "lookup", Arguments: `{"q":"x"}`}
	}
	if last.Role == messages.RoleTool {
		var results []string
		for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role == messages.RoleTool; i-- {
			m := r.Messages[i]
			results = append([]string{m.ToolCallID + "=" + resultText(m.Content)}, results...)
		}
		return fakellm.Reply{Text: "results: " + strings.Join(results, ", "), Usage: usage}
	}
	text := last.Content[strings.LastIndex(last.Content, "\n")+1:]
	switch {
	case last.Role == messages.RoleSystem && strings.Contains(last.Content, "requires"):
		return fakellm.Reply{ToolCalls: []messages.ToolCall{lookup("c_req")}, Usage: usage}
	case text == "look up":
		return fakellm.Reply{Text: "Let me look.", ToolCalls: []messages.ToolCall{lookup("c_1")}, Usage: usage}
	case text == "both":
		return fakellm.Reply{ToolCalls: []messages.ToolCall{{ID: "c_r", Name: "read", Arguments: `{"path":"none.txt"}`}, lookup("c_2")}, Usage: usage}
	case text == "twice":
		return fakellm.Reply{ToolCalls: []messages.ToolCall{lookup("c_a"), lookup("c_b")}, Usage: usage}
	case text == "refuse":
		return fakellm.Reply{Text: "I answer in words.", Usage: usage}
	}
	return fakellm.Reply{Text: "offered lookup: " + fmt.Sprint(slices.Contains(r.Tools, "lookup")), Usage: usage}
}

// resultText is a tool result's text without the untrusted-data markers around it.
func resultText(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) >= 3 && strings.HasPrefix(lines[0], "<<<UNTRUSTED") {
		lines = lines[1 : len(lines)-1]
	}
	return strings.Join(lines, " ")
}

const clientLookup = `[{"type":"function","function":{"name":"lookup","description":"Looks a thing up.","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`

type toolAnswer struct {
	Content   *string
	ToolCalls []struct {
		ID       string
		Type     string
		Function struct{ Name, Arguments string }
	} `json:"tool_calls"`
	Finish string
}

// completionOf reads a non-streamed answer's first choice.
func completionOf(t *testing.T, body string) toolAnswer {
	t.Helper()
	var c struct {
		Choices []struct {
			Message      toolAnswer
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("completion %s: %v", body, err)
	}
	a := c.Choices[0].Message
	a.Finish = c.Choices[0].FinishReason
	return a
}

// A durable session's client tool round trip: the model calls the client's tool, the answer
// ends with the call (finish_reason tool_calls, with the text written before it); the
// client's next request brings the result and the run goes on from it in the session, whose
// transcript keeps a model's conversation (the call, its result, the answer).
func TestOpenAIAPIClientToolDurable(t *testing.T) {
	r := newAPIRigWith(t, apiRigOpts{respond: clientToolModel})
	status, _, body := r.post(t, `{"model":"reef/main","user":"ann","tools":`+clientLookup+`,"messages":[{"role":"user","content":"look up"}]}`)
	if status != 200 {
		t.Fatalf("first request: %d %s", status, body)
	}
	a := completionOf(t, body)
	if a.Finish != "tool_calls" || len(a.ToolCalls) != 1 || a.ToolCalls[0].Function.Name != "lookup" ||
		a.ToolCalls[0].Function.Arguments != `{"q":"x"}` || a.ToolCalls[0].Type != "function" || a.Content == nil || *a.Content != "Let me look." {
		t.Fatalf("answer %s, want the call of lookup with finish_reason tool_calls", body)
	}
	if tools := r.script.Requests()[0].Tools; !slices.Contains(tools, "lookup") || !slices.Contains(tools, "read") {
		t.Errorf("tools offered %v, want the client's lookup beside the agent's own", tools)
	}
	id := a.ToolCalls[0].ID
	follow := fmt.Sprintf(`{"model":"reef/main","user":"ann","tools":%s,"messages":[{"role":"user","content":"look up"},
		{"role":"assistant","content":"Let me look.","tool_calls":[{"id":%q,"type":"function","function":{"name":"lookup","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":%q,"content":"42"}]}`, clientLookup, id, id)
	status, _, body = r.post(t, follow)
	if a := completionOf(t, body); status != 200 || a.Finish != "stop" || a.Content == nil || *a.Content != "results: "+id+"=42" {
		t.Fatalf("the result's request: %d %s", status, body)
	}
	var entries []persistence.Entry
	if err := r.store.View(func(rd persistence.Reader) (err error) {
		entries, err = rd.Messages("agent:main:openai:direct:ann", 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, fmt.Sprintf("%s %d %s", e.Role, len(e.ToolCalls), e.ToolCallID))
	}
	want := []string{"user 0 ", "assistant 1 ", "tool 0 " + id, "assistant 0 "}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s", d)
	}

	// A new message instead of the result: the call is answered as having none.
	r.post(t, `{"model":"reef/main","user":"bob","tools":`+clientLookup+`,"messages":[{"role":"user","content":"look up"}]}`)
	status, _, body = r.post(t, `{"model":"reef/main","user":"bob","messages":[{"role":"user","content":"never mind"}]}`)
	if status != 200 || !strings.Contains(body, "offered lookup: false") {
		t.Fatalf("a new message after a call: %d %s", status, body)
	}
	reqs := r.script.Requests()
	msgs := reqs[len(reqs)-1].Messages
	var noResult bool
	for _, m := range msgs {
		noResult = noResult || m.Role == messages.RoleTool && m.ToolCallID == "c_1" && m.IsError && strings.Contains(m.Content, "no result")
	}
	if !noResult {
		t.Errorf("the call the client never answered has no result in the next request: %+v", msgs)
	}
}

// A stateless client tool round trip, streamed: the call comes as tool_calls deltas with
// finish_reason tool_calls; the next request carries the whole conversation with the result,
// and nothing is stored.
func TestOpenAIAPIClientToolStatelessStream(t *testing.T) {
	r := newAPIRigWith(t, apiRigOpts{respond: clientToolModel})
	status, _, body := r.post(t, `{"model":"reef/main","stream":true,"tools":`+clientLookup+`,"messages":[{"role":"user","content":"look up"}]}`)
	if status != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("streamed: %d %s", status, body)
	}
	var calls []string
	finish := ""
	for _, line := range strings.Split(body, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    *int
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatal(err)
		}
		for _, c := range chunk.Choices {
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index == nil {
					t.Errorf("a tool_calls delta without index: %s", data)
				}
				calls = append(calls, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if d := cmp.Diff([]string{`c_1 lookup {"q":"x"}`}, calls); d != "" || finish != "tool_calls" {
		t.Fatalf("streamed calls (-want +got):\n%s\nfinish %q\n%s", d, finish, body)
	}
	if got := streamedContent(t, body); got != "Let me look." {
		t.Errorf("streamed text %q", got)
	}
	status, _, body = r.post(t, `{"model":"reef/main","stream":true,"tools":`+clientLookup+`,"messages":[{"role":"user","content":"look up"},
		{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"c_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}}]},
		{"role":"tool","tool_call_id":"c_1","content":"42"}]}`)
	if got := streamedContent(t, body); status != 200 || got != "results: c_1=42" || !strings.Contains(body, `"finish_reason":"stop"`) {
		t.Fatalf("the result's request: %d %q\n%s", status, got, body)
	}
	reqs := r.script.Requests()
	msgs := reqs[len(reqs)-1].Messages
	if n := len(msgs); n < 3 || msgs[n-2].Role != messages.RoleAssistant || len(msgs[n-2].ToolCalls) != 1 || msgs[n-1].Role != messages.RoleTool {
		t.Errorf("the model's conversation does not end with the call and its result: %+v", msgs)
	}
	if keys := r.sessions(t); len(keys) != 0 {
		t.Errorf("stateless requests left sessions %v", keys)
	}
}

// One step calling the agent's own tool and the client's: the agent's runs, the answer ends
// with the client's call only, and the next run sees both results. parallel_tool_calls false
// returns one client call of two; tool_choice none offers no client tool; required asks the
// model again when it answered without the call.
func TestOpenAIAPIClientToolChoices(t *testing.T) {
	r := newAPIRigWith(t, apiRigOpts{respond: clientToolModel})
	ask := func(extra, text string) toolAnswer {
		t.Helper()
		status, _, body := r.post(t, `{"model":"reef/main","tools":`+clientLookup+extra+`,"messages":[{"role":"user","content":"`+text+`"}]}`)
		if status != 200 {
			t.Fatalf("%s %s: %d %s", extra, text, status, body)
		}
		return completionOf(t, body)
	}
	a := ask("", "both")
	if a.Finish != "tool_calls" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "c_2" {
		t.Errorf("a step with the agent's and the client's tool: %+v", a)
	}
	if a := ask(`,"parallel_tool_calls":false`, "twice"); len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "c_a" {
		t.Errorf("parallel_tool_calls false: %+v, want only the first call", a)
	}
	if a := ask("", "twice"); len(a.ToolCalls) != 2 {
		t.Errorf("parallel calls: %+v, want both", a)
	}
	if a := ask(`,"tool_choice":"none"`, "hello"); a.Content == nil || *a.Content != "offered lookup: false" {
		t.Errorf("tool_choice none: %+v", a)
	}
	if a := ask(`,"tool_choice":"auto"`, "refuse"); a.Finish != "stop" {
		t.Errorf("tool_choice auto, answered in text: %+v", a)
	}
	for _, choice := range []string{`"required"`, `{"type":"function","function":{"name":"lookup"}}`} {
		if a := ask(`,"tool_choice":`+choice, "refuse"); a.Finish != "tool_calls" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "c_req" {
			t.Errorf("tool_choice %s, the model answered in text first: %+v", choice, a)
		}
	}
	status, _, body := r.post(t, `{"model":"reef/main","tools":[{"type":"function","function":{"name":"exec"}}],"messages":[{"role":"user","content":"hi"}]}`)
	var e struct {
		Error struct{ Type, Code, Param string }
	}
	if json.Unmarshal([]byte(body), &e) != nil || status != 400 || e.Error.Code != "tool_name_conflict" || e.Error.Param != "tools[0]" ||
		e.Error.Type != "invalid_request_error" {
		t.Errorf("a client tool named like the agent's exec: %d %s", status, body)
	}
}
