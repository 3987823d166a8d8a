package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// maxDescription caps a tool's description as offered to the model.
const maxDescription = 2000

// Tool is one tool of an MCP server, offered as "<server>__<tool>". Its description and schema
// follow the server's latest listing; a tool the server no longer lists is not offered.
type Tool struct {
	server *Server
	spec   messages.ToolSpec // from the first listing: the name stays
	remote string            // the tool's name on the server
}

var _ tools.Live = (*Tool)(nil)

var _ tools.Source = (*Server)(nil)

// wrapNew wraps tools the server lists for the first time and returns their reef names.
// Characters model APIs refuse in tool names become '_'; names longer than 64 characters,
// and a name another tool has already, are skipped. Call with s.mu held.
func (s *Server) wrapNew(listed []*remoteTool) []string {
	if s.wrapped == nil {
		s.wrapped = map[string]bool{}
	}
	taken := make(map[string]bool, len(s.tools))
	for _, t := range s.tools {
		taken[t.spec.Name] = true
	}
	var added []string
	for _, t := range listed {
		name := s.cfg.Name + Separator + toolName(t.Name)
		skip := len(name) > 64 || taken[name] || t.Name == ""
		s.wrapped[t.Name] = true // seen: a skipped tool is not reconsidered, nor warned about again
		if skip {
			s.log.Warn().Str("tool", t.Name).Msg("mcp tool skipped: its name is empty, too long or taken")
			continue
		}
		taken[name] = true
		s.tools = append(s.tools, &Tool{server: s, remote: t.Name, spec: specOf(name, t)})
		added = append(added, name)
	}
	return added
}

// specOf is the spec of a listed tool, offered as name.
func specOf(name string, t *remoteTool) messages.ToolSpec {
	params := t.InputSchema
	if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return messages.ToolSpec{Name: name, Description: capText(desc, maxDescription), Parameters: params}
}

// toolName keeps [A-Za-z0-9_-] and turns anything else into '_'.
func toolName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// Spec is the tool as offered to the model, as the server lists it now.
func (t *Tool) Spec() messages.ToolSpec {
	if cur, _ := t.server.currentTool(t.remote); cur != nil {
		return specOf(t.spec.Name, cur)
	}
	return t.spec
}

// Offered reports whether the server's latest listing still has the tool.
func (t *Tool) Offered() bool {
	cur, _ := t.server.currentTool(t.remote)
	return cur != nil
}

// Generation grows whenever the server's listing changes.
func (t *Tool) Generation() uint64 {
	_, g := t.server.currentTool(t.remote)
	return g
}

// Server names the MCP server the tool belongs to.
func (t *Tool) Server() string { return t.server.cfg.Name }

// Run calls the tool on its server, waiting for the connection within the server's timeout.
// A server that hangs, is down or stops during the call yields an error; the server's own
// error results (isError) are error results.
func (t *Tool) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	cfg := t.server.cfg
	args := bytes.TrimSpace(call.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return tools.Result{}, errors.New("arguments must be a JSON object matching the tool's parameters")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	cs, err := t.server.live(ctx)
	if err != nil {
		return tools.Result{}, fmt.Errorf("MCP server %s is not available: %v", cfg.Name, err)
	}
	if !t.Offered() {
		return tools.Result{}, fmt.Errorf("MCP server %s no longer offers %s; it was not run", cfg.Name, t.remote)
	}
	res, err := cs.callTool(ctx, t.remote, json.RawMessage(args))
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tools.Result{}, fmt.Errorf("MCP server %s did not answer within %s; the call was cancelled (mcp.servers.%s.timeoutSeconds sets the limit)",
			cfg.Name, cfg.Timeout, cfg.Name)
	case errors.Is(err, errSessionGone):
		t.server.drop(cs)
		return tools.Result{}, fmt.Errorf("MCP server %s restarted and no longer knows reef's session; the call was not run (reef is connecting again: try it once more)", cfg.Name)
	case errClosed(err):
		t.server.drop(cs)
		return tools.Result{}, fmt.Errorf("MCP server %s stopped during the call; it is being restarted, and the call may or may not have had an effect", cfg.Name)
	default:
		return tools.Result{}, fmt.Errorf("MCP server %s: %v", cfg.Name, err)
	}
	return tools.Result{Content: resultText(res, cfg.MaxOutput), IsError: res.IsError}, nil
}

// resultText joins a result's text content; images, audio and resources without text are
// noted, not included. Text past max bytes is cut with a note.
func resultText(res *callResult, max int) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		parts = append(parts, string(res.StructuredContent))
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		text = "(the tool returned no content)"
	}
	return capText(text, max)
}

func contentText(c content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return fmt.Sprintf("[%s %s, %d bytes: not shown]", c.Type, c.MIMEType, decodedLen(c.Data))
	case "resource_link":
		return fmt.Sprintf("[resource link %s: %s]", c.Name, c.URI)
	case "resource":
		r := c.Resource
		if r == nil {
			return "[resource]"
		}
		if r.Text != "" {
			return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
		}
		return fmt.Sprintf("[resource %s, %s, %d bytes: not shown]", r.URI, r.MIMEType, decodedLen(r.Blob))
	}
	return fmt.Sprintf("[%s content: not shown]", c.Type)
}

// capText cuts s to at most max bytes on a rune boundary, noting the cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", cut, len(s))
}
