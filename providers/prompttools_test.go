package providers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/providers/fake"
)

func TestPromptToolsRewritesTheRequest(t *testing.T) {
	script := fake.NewScript()
	stable := "You are reef.\n"
	req := providers.Request{
		System:       stable + "Today is Monday.",
		SystemStable: len(stable),
		Tools: []messages.ToolSpec{{
			Name: "read_file", Description: "Reads a file of the workspace.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`),
		}},
		Messages: []messages.ChatMessage{
			{Role: messages.RoleUser, Content: "show a.txt"},
			{Role: messages.RoleAssistant, Content: "Reading.", ToolCalls: []messages.ToolCall{
				{ID: "x1", Name: "read_file", Arguments: `{"path": "a.txt"}`},
				{ID: "x2", Name: "read_file", Arguments: `{"path": `},
			}},
			{Role: messages.RoleTool, ToolCallID: "x1", ToolName: "read_file", Content: "hello"},
			{Role: messages.RoleTool, ToolCallID: "x2", ToolName: "read_file", Content: "bad arguments", IsError: true},
		},
	}
	if _, err := call(context.Background(), providers.PromptTools(fake.New(script)), req); err != nil {
		t.Fatal(err)
	}
	got := script.Requests()[0]
	if len(got.Tools) != 0 {
		t.Errorf("tools sent natively: %v", got.Tools)
	}
	if !strings.HasPrefix(got.System, req.System+"\n\n## Tools") {
		t.Errorf("stable prefix changed: %q", got.System)
	}
	for _, want := range []string{"<tool_call>", "</tool_call>", "read_file", "Reads a file of the workspace.",
		`{"type":"object","properties":{"path":{"type":"string"}}}`} {
		if !strings.Contains(got.System, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, got.System)
		}
	}
	wantMsgs := []messages.ChatMessage{
		{Role: messages.RoleUser, Content: "show a.txt"},
		{Role: messages.RoleAssistant, Content: "Reading.\n" +
			`<tool_call>{"name": "read_file", "arguments": {"path":"a.txt"}}</tool_call>` + "\n" +
			`<tool_call>{"name": "read_file", "arguments": "{\"path\": "}</tool_call>`},
		{Role: messages.RoleUser, Content: "<tool_result name=\"read_file\" id=\"x1\">\nhello\n</tool_result>\n" +
			"<tool_result name=\"read_file\" id=\"x2\" error=\"true\">\nbad arguments\n</tool_result>"},
	}
	if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if req.Messages[1].ToolCalls == nil || req.Messages[2].Role != messages.RoleTool {
		t.Error("the caller's messages were modified")
	}
}

func TestPromptToolsPassesPlainRequestsThrough(t *testing.T) {
	script := fake.NewScript()
	req := providers.Request{System: "sys", Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}}
	if _, err := call(context.Background(), providers.PromptTools(fake.New(script)), req); err != nil {
		t.Fatal(err)
	}
	if got := script.Requests()[0]; got.System != "sys" {
		t.Errorf("system %q, want unchanged", got.System)
	}
}

func TestPromptToolsParsesCalls(t *testing.T) {
	read := func(id, args string) messages.ToolCall {
		return messages.ToolCall{ID: id, Name: "read", Arguments: args}
	}
	tests := []struct {
		name   string
		deltas []string
		want   answer
	}{
		{"plain text", []string{"Hello ", "a < b and <b>bold</b>"},
			answer{Text: "Hello a < b and <b>bold</b>", Stop: providers.StopEnd}},
		{"one call", []string{`Checking. <tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>`},
			answer{Text: "Checking. ", Calls: []messages.ToolCall{read("call_1", `{"path":"a"}`)}, Stop: providers.StopToolUse}},
		{"tags split across deltas", []string{"Checking <to", "ol_ca", `ll>{"name":"read","argu`, `ments":{"path":"a"}}</tool`, "_call", "> done"},
			answer{Text: "Checking  done", Calls: []messages.ToolCall{read("call_1", `{"path":"a"}`)}, Stop: providers.StopToolUse}},
		{"two calls", []string{`<tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call>` + "\n" +
			`<tool_call>` + "\n```json\n" + `{"name":"read","arguments":"{\"path\":\"b\"}"}` + "\n```\n</tool_call>"},
			answer{Text: "\n", Calls: []messages.ToolCall{read("call_1", `{"path":"a"}`), read("call_2", `{"path":"b"}`)},
				Stop: providers.StopToolUse}},
		{"malformed JSON is still a call", []string{`<tool_call>{"name": "read", "arguments": {"path": </tool_call>`},
			answer{Calls: []messages.ToolCall{read("call_1", `{"name": "read", "arguments": {"path":`)}, Stop: providers.StopToolUse}},
		{"no arguments", []string{`<tool_call>{"name": "read"}</tool_call>`},
			answer{Calls: []messages.ToolCall{read("call_1", `{}`)}, Stop: providers.StopToolUse}},
		{"tag prefix at the end is text", []string{"see <tool"}, answer{Text: "see <tool", Stop: providers.StopEnd}},
		{"unterminated call at the end", []string{`<tool_call>{"name":"read","arguments":{}}`},
			answer{Calls: []messages.ToolCall{read("call_1", `{}`)}, Stop: providers.StopToolUse}},
		{"unterminated garbage at the end is text", []string{`<tool_call>I am not sure`},
			answer{Text: "<tool_call>I am not sure", Stop: providers.StopEnd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){
				func(providers.Request) (providers.Stream, error) { return textDeltas(tt.deltas...), nil },
			}}
			req := providers.Request{Tools: []messages.ToolSpec{{Name: "read"}}}
			got, err := call(context.Background(), providers.PromptTools(p), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPromptToolsTextNeverLeaksATag(t *testing.T) {
	full := `Sure. <tool_call>{"name":"read","arguments":{"path":"a"}}</tool_call> Then more.`
	for size := 1; size <= len(full); size++ {
		var deltas []string
		for i := 0; i < len(full); i += size {
			deltas = append(deltas, full[i:min(i+size, len(full))])
		}
		p := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){
			func(providers.Request) (providers.Stream, error) { return textDeltas(deltas...), nil },
		}}
		got, err := call(context.Background(), providers.PromptTools(p), providers.Request{Tools: []messages.ToolSpec{{Name: "read"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != "Sure.  Then more." || len(got.Calls) != 1 || got.Calls[0].Arguments != `{"path":"a"}` {
			t.Fatalf("deltas of %d bytes: got %+v", size, got)
		}
	}
}

func TestPromptToolsIDsFollowEarlierCalls(t *testing.T) {
	p := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){
		func(providers.Request) (providers.Stream, error) {
			return textDeltas(`<tool_call>{"name":"read","arguments":{}}</tool_call>`), nil
		},
	}}
	req := providers.Request{
		Tools: []messages.ToolSpec{{Name: "read"}},
		Messages: []messages.ChatMessage{
			{Role: messages.RoleAssistant, ToolCalls: []messages.ToolCall{{ID: "call_1", Name: "read", Arguments: "{}"}}},
			{Role: messages.RoleTool, ToolCallID: "call_1", ToolName: "read", Content: "x"},
		},
	}
	got, err := call(context.Background(), providers.PromptTools(p), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Calls) != 1 || got.Calls[0].ID != "call_2" {
		t.Errorf("calls %+v, want one with id call_2", got.Calls)
	}
}

func TestPromptToolsCutDropsHalfCall(t *testing.T) {
	p := &funcProvider{fns: []func(providers.Request) (providers.Stream, error){
		func(providers.Request) (providers.Stream, error) {
			s := textDeltas("ok ", `<tool_call>{"name":"read","argum`)
			s.events = s.events[:2] // no EventDone
			s.err = providers.ErrStreamCut
			return s, nil
		},
	}}
	got, err := call(context.Background(), providers.PromptTools(p), providers.Request{Tools: []messages.ToolSpec{{Name: "read"}}})
	if err != providers.ErrStreamCut || len(got.Calls) != 0 || got.Text != "ok " {
		t.Errorf("got %+v, %v; want text \"ok \", no call, ErrStreamCut", got, err)
	}
}

// TestPromptToolsKeepsTheTail: the tool section comes after the prompt's volatile tail, and
// the stable prefix stays a prefix.
func TestPromptToolsKeepsTheTail(t *testing.T) {
	script := fake.NewScript()
	req := providers.Request{System: "You are reef.\n", SystemStable: 14, SystemTail: "Today is Monday.",
		Tools:    []messages.ToolSpec{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Messages: []messages.ChatMessage{{Role: messages.RoleUser, Content: "hi"}}}
	if _, err := call(context.Background(), providers.PromptTools(fake.New(script)), req); err != nil {
		t.Fatal(err)
	}
	if got := script.Requests()[0].System; !strings.HasPrefix(got, "You are reef.\nToday is Monday.\n\n## Tools") {
		t.Errorf("system %q, want the prompt with its tail, then the tools", got)
	}
}
