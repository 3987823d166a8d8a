package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
)

// The MCP revisions reef speaks (modelcontextprotocol.io/specification). It asks for the
// newest; a server may answer with an older one it supports.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// remoteTool is a tool as a server lists it (tools/list).
type remoteTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
}

// callResult is a tools/call result.
type callResult struct {
	Content           []content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// content is one block of a result: text, image, audio, resource_link or resource.
type content struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	Data     string    `json:"data,omitempty"` // base64, for image and audio
	MIMEType string    `json:"mimeType,omitempty"`
	URI      string    `json:"uri,omitempty"`  // resource_link
	Name     string    `json:"name,omitempty"` // resource_link
	Resource *resource `json:"resource,omitempty"`
}

type resource struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"` // base64
}

// client is a connected, initialised MCP session.
type client struct {
	rpc     *session
	version string // the protocol revision agreed on
}

// handshake initialises the session: initialize, then notifications/initialized.
// setVersion, when set, learns the revision agreed on (streamable HTTP sends it as a header).
func handshake(ctx context.Context, s *session, setVersion func(string)) (*client, error) {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	params := map[string]any{
		"protocolVersion": protocolVersions[0],
		// Roots, as an empty list (answerRequest): reef names no directories to servers.
		"capabilities": map[string]any{"roots": map[string]any{}},
		"clientInfo":   map[string]string{"name": "reef", "version": "1"},
	}
	if err := s.call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	if !slices.Contains(protocolVersions, res.ProtocolVersion) {
		return nil, fmt.Errorf("the server speaks MCP %q, which reef does not (it speaks %v)", res.ProtocolVersion, protocolVersions)
	}
	if setVersion != nil {
		setVersion(res.ProtocolVersion)
	}
	if err := s.notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, err
	}
	return &client{rpc: s, version: res.ProtocolVersion}, nil
}

// tools lists every tool, page by page.
func (c *client) tools(ctx context.Context) ([]*remoteTool, error) {
	var all []*remoteTool
	cursor := ""
	for page := 0; ; page++ {
		if page == 1000 {
			return nil, fmt.Errorf("tools/list: more than 1000 pages")
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var res struct {
			Tools      []*remoteTool `json:"tools"`
			NextCursor string        `json:"nextCursor"`
		}
		if err := c.rpc.call(ctx, "tools/list", params, &res); err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			if t != nil {
				all = append(all, t)
			}
		}
		if res.NextCursor == "" {
			return all, nil
		}
		cursor = res.NextCursor
	}
}

// callTool calls a tool with args, a JSON object.
func (c *client) callTool(ctx context.Context, name string, args json.RawMessage) (*callResult, error) {
	var res callResult
	err := c.rpc.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// decodedLen is the length of base64 data once decoded (0 when it is not base64).
func decodedLen(b64 string) int {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return 0
	}
	return len(b)
}
