// Command slowmcp is an MCP server over stdio that takes its time to
// start, as Node servers started through npx do: it sleeps -delay before
// it reads anything, then serves a few tools. scripts/mcpbench.sh
// configures two of them to measure how long ask waits before its first
// request, with and without their tool lists cached.
//
//	slowmcp -delay 1.5s -name docs
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	delay := flag.Duration("delay", time.Second, "how long to take to start")
	name := flag.String("name", "slow", "the server's name, and its tools' prefix")
	flag.Parse()
	time.Sleep(*delay)
	s := sdk.NewServer(&sdk.Implementation{Name: *name, Version: "1.0.0"}, nil)
	for _, tool := range []string{"search", "read", "write"} {
		s.AddTool(&sdk.Tool{Name: tool, Description: fmt.Sprintf("%s in %s", tool, *name),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: tool + " done"}}}, nil
			})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "slowmcp:", err)
		os.Exit(1)
	}
}
