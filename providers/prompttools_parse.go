package providers

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/reefgw/reef/messages"
)

// toolParser turns <tool_call> blocks in the streamed text into EventToolCall, passing the
// other text through. Text that could be the start of a tag is held back until it is decided.
type toolParser struct {
	inner   Stream
	buf     strings.Builder // undecided text: a possible tag prefix, or the inside of a block
	inBlock bool
	queue   []Event
	nextID  int
	calls   int
}

func (p *toolParser) Next() (Event, error) {
	for len(p.queue) == 0 {
		ev, err := p.inner.Next()
		if err != nil {
			return ev, err
		}
		switch ev.Kind {
		case EventText:
			p.feed(ev.Text)
		case EventToolCall:
			p.calls++
			p.queue = append(p.queue, ev)
		case EventDone:
			p.flush()
			if p.calls > 0 {
				ev.StopReason = StopToolUse
			}
			p.queue = append(p.queue, ev)
		default:
			p.queue = append(p.queue, ev)
		}
	}
	ev := p.queue[0]
	p.queue = p.queue[1:]
	return ev, nil
}

func (p *toolParser) Close() error { return p.inner.Close() }

// feed adds a text delta and queues whatever is decided.
func (p *toolParser) feed(delta string) {
	p.buf.WriteString(delta)
	s := p.buf.String()
	for {
		if p.inBlock {
			end := strings.Index(s, toolCallClose)
			if end < 0 {
				break
			}
			p.emitCall(s[:end])
			s = s[end+len(toolCallClose):]
			p.inBlock = false
			continue
		}
		start := strings.Index(s, toolCallOpen)
		if start < 0 {
			keep := partialTag(s, toolCallOpen)
			p.emitText(s[:len(s)-keep])
			s = s[len(s)-keep:]
			break
		}
		p.emitText(s[:start])
		s = s[start+len(toolCallOpen):]
		p.inBlock = true
	}
	p.buf.Reset()
	p.buf.WriteString(s)
}

// flush decides what is left when the model stops: a pending tag prefix is text; an
// unterminated block is a call when it holds a JSON object naming a tool, else text.
func (p *toolParser) flush() {
	s := p.buf.String()
	p.buf.Reset()
	if !p.inBlock {
		p.emitText(s)
		return
	}
	p.inBlock = false
	if c, ok := parseToolCall(s); ok {
		p.emit(c)
		return
	}
	p.emitText(toolCallOpen + s)
}

// partialTag returns the length of the longest suffix of s that is a proper prefix of tag.
func partialTag(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

func (p *toolParser) emitText(s string) {
	if s != "" {
		p.queue = append(p.queue, Event{Kind: EventText, Text: s})
	}
}

// emitCall queues the call in a block, malformed or not: the tool layer reports bad arguments.
func (p *toolParser) emitCall(body string) {
	c, ok := parseToolCall(body)
	if !ok {
		c = messages.ToolCall{Name: guessName(body), Arguments: strings.TrimSpace(body)}
	}
	p.emit(c)
}

func (p *toolParser) emit(c messages.ToolCall) {
	c.ID = "call_" + strconv.Itoa(p.nextID)
	p.nextID++
	p.calls++
	p.queue = append(p.queue, Event{Kind: EventToolCall, ToolCall: c})
}

// parseToolCall reads {"name": ..., "arguments": {...}} (also "parameters", arguments given as
// a JSON string, and a ```json fence around it).
func parseToolCall(body string) (messages.ToolCall, bool) {
	body = strings.TrimSpace(body)
	body = strings.TrimPrefix(body, "```json")
	body = strings.TrimPrefix(body, "```")
	body = strings.TrimSuffix(strings.TrimSpace(body), "```")
	var v struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Name == "" {
		return messages.ToolCall{}, false
	}
	args := v.Arguments
	if len(args) == 0 {
		args = v.Parameters
	}
	var str string
	if json.Unmarshal(args, &str) == nil && compactJSON(json.RawMessage(str)) != "" {
		args = json.RawMessage(str)
	}
	out := compactJSON(args)
	if out == "" || out == "null" {
		out = "{}"
	}
	return messages.ToolCall{Name: v.Name, Arguments: out}, true
}

var nameRE = regexp.MustCompile(`"name"\s*:\s*"([^"]*)"`)

// guessName finds the tool name in a malformed block, so the error result names the tool.
func guessName(body string) string {
	if m := nameRE.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return ""
}
