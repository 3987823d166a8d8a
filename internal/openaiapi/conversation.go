package openaiapi

import (
	"fmt"
	"strings"

	"github.com/reefgw/reef/messages"
)

// turn is what a request's messages give its run.
type turn struct {
	text    string                 // the new user message ("" when the request ends with tool results)
	images  []string               // its image_url parts
	context []messages.ChatMessage // stateless: the conversation before the new turn
	results []messages.ChatMessage // the tool results the request ends with: they continue the run
}

// toolTail is where the tool results a request ends with start (len(msgs) when it ends
// otherwise).
func toolTail(msgs []chatMessage) int {
	k := len(msgs)
	for k > 0 && isToolRole(msgs[k-1].Role) {
		k--
	}
	return k
}

func isToolRole(role string) bool { return role == "tool" || role == "function" }

// newTurn is the new turn of a request to a durable session: the tool results it ends with
// (the session holds the calls they answer), or else its last user message (reef has the
// earlier ones).
func newTurn(msgs []chatMessage) (turn, *apiError) {
	if k := toolTail(msgs); k < len(msgs) {
		res, err := toolResults(msgs, k, nil)
		return turn{results: res}, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == "user" {
			t, images, err := m.content()
			if err != nil {
				return turn{}, badRequest("invalid_content", fmt.Sprintf("messages[%d]: %v", i, err))
			}
			return turn{text: t, images: images}, nil
		}
	}
	return turn{}, badRequest("missing_user_message", "messages has no message with role user")
}

// conversation is a stateless request's messages: the last one (a user message), or the tool
// results it ends with, is the new turn; the ones before it the conversation it continues,
// the client's tool calls and results as the model's own. A call the client answered with a
// new message instead of a result gets a result that says so (a model's conversation answers
// every call).
func conversation(msgs []chatMessage) (turn, *apiError) {
	k := toolTail(msgs)
	out := make([]messages.ChatMessage, 0, k)
	open := map[string]string{} // calls of the last assistant message without a result: id → tool
	closeOpen := func(calls []messages.ToolCall) {
		for _, c := range calls {
			if _, ok := open[c.ID]; ok {
				out = append(out, messages.ChatMessage{Role: messages.RoleTool, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
					Content: "no result: the client sent none"})
			}
		}
		clear(open)
	}
	var lastCalls []messages.ToolCall
	for i, m := range msgs[:k] {
		if isToolRole(m.Role) {
			name, ok := open[m.ToolCallID]
			if !ok {
				return turn{}, invalidToolMessage(i, m.ToolCallID)
			}
			text, err := m.text()
			if err != nil {
				return turn{}, badRequest("invalid_content", fmt.Sprintf("messages[%d]: %v", i, err))
			}
			delete(open, m.ToolCallID)
			out = append(out, messages.ChatMessage{Role: messages.RoleTool, ToolCallID: m.ToolCallID, ToolName: name, Content: text})
			continue
		}
		closeOpen(lastCalls)
		cm, err := m.chat(i == len(msgs)-1)
		if err != nil {
			return turn{}, badRequest("invalid_content", fmt.Sprintf("messages[%d]: %v", i, err))
		}
		lastCalls = cm.ToolCalls
		for _, c := range cm.ToolCalls {
			open[c.ID] = c.Name
		}
		out = append(out, cm)
	}
	if k < len(msgs) {
		res, err := toolResults(msgs, k, open)
		if err != nil {
			return turn{}, err
		}
		return turn{context: out, results: res}, nil
	}
	last := out[len(out)-1]
	if last.Role != messages.RoleUser {
		return turn{}, badRequest("missing_user_message",
			fmt.Sprintf("the last message is %q; a request ends with the user's message (or tool results)", msgs[len(msgs)-1].Role))
	}
	_, images, _ := msgs[len(msgs)-1].content()
	return turn{text: last.Content, images: images, context: out[:len(out)-1]}, nil
}

// toolResults are the tool messages from msgs[k] on. With open (a stateless request), each
// must answer a call of the assistant message before them.
func toolResults(msgs []chatMessage, k int, open map[string]string) ([]messages.ChatMessage, *apiError) {
	var out []messages.ChatMessage
	for i := k; i < len(msgs); i++ {
		m := msgs[i]
		name, ok := open[m.ToolCallID]
		if m.ToolCallID == "" || open != nil && !ok {
			return nil, invalidToolMessage(i, m.ToolCallID)
		}
		text, err := m.text()
		if err != nil {
			return nil, badRequest("invalid_content", fmt.Sprintf("messages[%d]: %v", i, err))
		}
		out = append(out, messages.ChatMessage{Role: messages.RoleTool, ToolCallID: m.ToolCallID, ToolName: name, Content: text})
	}
	return out, nil
}

func invalidToolMessage(i int, id string) *apiError {
	return paramError("invalid_tool_message", fmt.Sprintf("messages[%d]", i), fmt.Sprintf(
		"messages[%d] is a tool result for the call %q, which the assistant message before it did not make", i, id))
}

// chat is a message other than a tool result as an entry of a stateless run's conversation.
// Images of the last message go with the run's message; those of earlier ones are named in a
// note.
func (m chatMessage) chat(last bool) (messages.ChatMessage, error) {
	text, images, err := m.content()
	if err != nil {
		return messages.ChatMessage{}, err
	}
	if len(images) > 0 && !last {
		text = strings.TrimSpace(text + fmt.Sprintf("\n[%d image(s) the client sent here: not shown; the model sees the images of the last message only]", len(images)))
	}
	switch m.Role {
	case "system", "developer":
		return messages.ChatMessage{Role: messages.RoleSystem, Content: text}, nil
	case "user":
		return messages.ChatMessage{Role: messages.RoleUser, Content: text}, nil
	case "assistant":
		cm := messages.ChatMessage{Role: messages.RoleAssistant, Content: text}
		for i, c := range m.ToolCalls {
			if c.ID == "" {
				return messages.ChatMessage{}, fmt.Errorf("tool_calls[%d] has no id", i)
			}
			cm.ToolCalls = append(cm.ToolCalls, messages.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		return cm, nil
	}
	return messages.ChatMessage{}, fmt.Errorf("unknown role %q: one of system, developer, user, assistant, tool", m.Role)
}
