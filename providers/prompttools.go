package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"strings"

	"github.com/reefgw/reef/messages"
)

// Tags of the text protocol PromptTools teaches the model.
const (
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
)

// PromptTools lets models without native tool calling use tools. It removes req.Tools,
// describes them in a section appended to the system prompt (after the stable prefix, which
// stays valid), rewrites earlier tool calls and results as text, and parses the model's
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> blocks back into EventToolCall.
func PromptTools(p Provider) Provider {
	return &promptTools{p: p}
}

type promptTools struct {
	p Provider
}

func (pt *promptTools) Stream(ctx context.Context, req Request) (Stream, error) {
	if len(req.Tools) == 0 && !hasToolTraffic(req.Messages) {
		return pt.p.Stream(ctx, req)
	}
	calls := 0
	for _, m := range req.Messages {
		calls += len(m.ToolCalls)
	}
	if len(req.Tools) > 0 {
		req.System, req.SystemTail = appendSection(req.System+req.SystemTail, toolSection(req.Tools)), ""
	}
	req.Tools = nil
	req.Messages = textToolMessages(req.Messages)
	s, err := pt.p.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &toolParser{inner: s, nextID: calls + 1}, nil
}

func hasToolTraffic(msgs []messages.ChatMessage) bool {
	for _, m := range msgs {
		if len(m.ToolCalls) > 0 || m.Role == messages.RoleTool {
			return true
		}
	}
	return false
}

// appendSection appends section after a blank line, never changing system itself, so the
// stable prefix (SystemStable) stays valid.
func appendSection(system, section string) string {
	switch {
	case system == "" || strings.HasSuffix(system, "\n\n"):
		return system + section
	case strings.HasSuffix(system, "\n"):
		return system + "\n" + section
	}
	return system + "\n\n" + section
}

// toolSection describes the tools and the calling format, in our own words.
func toolSection(tools []messages.ToolSpec) string {
	var b strings.Builder
	b.WriteString("## Tools\n\n")
	b.WriteString("You can use the tools listed below. To use one, write a block of exactly this form ")
	b.WriteString("in your answer:\n\n")
	b.WriteString(toolCallOpen + `{"name": "TOOL_NAME", "arguments": {...}}` + toolCallClose + "\n\n")
	b.WriteString("The content between the tags must be one JSON object with the tool's name and its ")
	b.WriteString("arguments, which must match the tool's JSON schema. Write one block per call; ")
	b.WriteString("you may write several blocks to make several calls. After your calls, stop and wait: ")
	b.WriteString("each result comes back in a <tool_result name=\"...\" id=\"...\"> block. ")
	b.WriteString("Never write a tool_result block yourself and never invent results. ")
	b.WriteString("When you need no tool, answer normally without any block.\n\n")
	b.WriteString("Available tools:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "\n### %s\n", t.Name)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(d + "\n")
		}
		params := compactJSON(t.Parameters)
		if params == "" {
			params = `{"type":"object","properties":{}}`
		}
		b.WriteString("Arguments schema: " + params + "\n")
	}
	return b.String()
}

// textToolMessages rewrites assistant tool calls as <tool_call> blocks and tool results as
// user messages holding <tool_result> blocks (consecutive results share one message).
func textToolMessages(msgs []messages.ChatMessage) []messages.ChatMessage {
	out := make([]messages.ChatMessage, 0, len(msgs))
	prevResult := false
	for _, m := range msgs {
		switch {
		case m.Role == messages.RoleTool:
			block := toolResultBlock(m)
			if prevResult {
				out[len(out)-1].Content += "\n" + block
			} else {
				out = append(out, messages.ChatMessage{Role: messages.RoleUser, Content: block, Time: m.Time})
			}
			prevResult = true
			continue
		case m.Role == messages.RoleAssistant && len(m.ToolCalls) > 0:
			var b strings.Builder
			b.WriteString(m.Content)
			for _, c := range m.ToolCalls {
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				b.WriteString(toolCallBlock(c))
			}
			m.Content = b.String()
			m.ToolCalls = nil
		}
		prevResult = false
		out = append(out, m)
	}
	return out
}

func toolCallBlock(c messages.ToolCall) string {
	args := compactJSON(json.RawMessage(c.Arguments))
	if args == "" { // malformed: keep the text the model wrote, as a JSON string
		q, _ := json.Marshal(c.Arguments)
		args = string(q)
	}
	name, _ := json.Marshal(c.Name)
	return toolCallOpen + `{"name": ` + string(name) + `, "arguments": ` + args + `}` + toolCallClose
}

func toolResultBlock(m messages.ChatMessage) string {
	attrs := fmt.Sprintf(`name="%s" id="%s"`, html.EscapeString(m.ToolName), html.EscapeString(m.ToolCallID))
	if m.IsError {
		attrs += ` error="true"`
	}
	return "<tool_result " + attrs + ">\n" + m.Content + "\n</tool_result>"
}

// compactJSON returns raw compacted, or "" when it is empty or not valid JSON.
func compactJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return ""
	}
	return b.String()
}
