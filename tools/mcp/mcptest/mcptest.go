// Package mcptest is an MCP server for tests, built with the official Go SDK: tools that echo,
// fail, crash the server's process once, hang, and return an image. Tests run it in-process
// (streamable HTTP) or over stdio in a child process (ServeStdio from a test binary's TestMain).
package mcptest

import (
	"context"
	"os"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvServe names the variable that makes a test binary serve MCP over stdio (see ServeStdio).
const EnvServe = "REEF_MCPTEST_SERVE"

// EnvCrashMarker names the file the crash tool creates before it kills the server: while the
// file does not exist, a call of crash kills the process mid-call; once it exists, crash
// answers "survived".
const EnvCrashMarker = "REEF_MCPTEST_CRASH_MARKER"

// EchoArgs are the echo tool's arguments.
type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to send back"`
}

// NewServer returns the test server with its tools: echo, fail (an isError result), crash,
// hang (never answers, ignoring cancellation), image, big (text of n bytes) and env (the
// value of a variable of the server's environment).
func NewServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Sends the text back."},
		func(_ context.Context, _ *sdk.CallToolRequest, in EchoArgs) (*sdk.CallToolResult, any, error) {
			return text("echo: " + in.Text), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fails with a tool error."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			r := text("the disk is on fire")
			r.IsError = true
			return r, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Kills the server once."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			marker := os.Getenv(EnvCrashMarker)
			if _, err := os.Stat(marker); marker != "" && err != nil {
				_ = os.WriteFile(marker, []byte("crashed"), 0o600)
				os.Exit(3)
			}
			return text("survived"), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answers."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			select {}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Returns a caption and an image."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a red dot"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG....")}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Returns n bytes of text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			N int `json:"n"`
		}) (*sdk.CallToolResult, any, error) {
			return text(strings.Repeat("x", in.N)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Returns a variable of the server's environment."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*sdk.CallToolResult, any, error) {
			return text(in.Name + "=" + os.Getenv(in.Name)), nil, nil
		})
	return s
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// ServeStdio serves NewServer over stdin and stdout until stdin closes, then exits, when the
// environment has EnvServe set; otherwise it returns at once. Call it first in TestMain.
func ServeStdio() {
	if os.Getenv(EnvServe) == "" {
		return
	}
	if err := NewServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}
