package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeMCP is the testscripts' MCP server over stdio (the command fakemcp):
// one read-only tool, echo. FAKEMCP_LOG names a file it appends "started"
// to when it starts, so a script can tell whether a run started it;
// FAKEMCP_GATE names a file it waits for before it answers anything, so a
// test can hold it in its slow start.
func fakeMCP() int {
	if log := os.Getenv("FAKEMCP_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, "started")
			f.Close()
		}
	}
	if gate := os.Getenv("FAKEMCP_GATE"); gate != "" {
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "fakemcp", Version: "1.0.0"}, nil)
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echo the message",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + args.Message}}}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
