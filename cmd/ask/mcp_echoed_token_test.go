package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// L5: a remote MCP server that echoes the token its header carried handed
// it to the model, the provider and the transcript. Header values as sent
// are scrubbed from every tool result, bare and as the Bearer credential.
func TestMCPEchoedTokenIsScrubbed(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "echo-auth", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Say who the caller is", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			auth := ""
			if req.Extra != nil {
				auth = req.Extra.Header.Get("Authorization")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you sent " + auth}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	remote := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote.Listener = l
	remote.Start()
	defer remote.Close()
	const token = "mcp-echoed-token-0123456789"
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("who", "local__whoami", `{}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	r := runAsk(t, askEnv{server: srv, env: map[string]string{"MCP_TOKEN": token}},
		"--json", "--mcp", remote.URL+"/mcp", "--mcp-header", "Authorization: Bearer ${MCP_TOKEN}", "who am I")
	if r.code != exitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	c := callsByID(decodeFinal(t, r).ToolCalls)["who"]
	if !strings.Contains(c.Content, "you sent") {
		t.Fatalf("the tool did not run: %+v", c)
	}
	if strings.Contains(r.stdout, token) || bytes.Contains(srv.Requests()[len(srv.Requests())-1], []byte(token)) {
		t.Errorf("the echoed MCP token reached the model or the output: %s", c.Content)
	}
}
