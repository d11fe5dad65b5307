package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/sandbox"
)

// The test binary doubles as an MCP server over stdio: with
// ASK_MCP_TEST_SERVER=MODE it serves instead of testing, so that the tests
// exercise real processes, pipes and process groups without Node.
const serverModeVar = "ASK_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	sandbox.Main() // a sandboxed server's child is this test binary
	if mode := os.Getenv(serverModeVar); mode != "" {
		os.Exit(serve(mode))
	}
	os.Exit(m.Run())
}

// serverCommand is an --mcp value that runs the test binary in mode.
func serverCommand(mode string, extraEnv ...string) string {
	return strings.Join(append([]string{serverModeVar + "=" + mode}, extraEnv...), " ") + " '" + os.Args[0] + "' --test.run=^$"
}

func serve(mode string) int {
	switch mode {
	case "silent": // starts, never answers
		time.Sleep(time.Hour)
		return 0
	case "crash":
		fmt.Fprintln(os.Stderr, "loading config")
		fmt.Fprintln(os.Stderr, "fatal: config file /etc/nowhere.json not found")
		return 2
	case "npx404": // what `npx -y` prints for a package the registry does not have
		fmt.Fprint(os.Stderr, `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@ask-cli%2fno-such-server - Not found
npm error 404
npm error 404  '@ask-cli/no-such-server@*' is not in this registry.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git repo.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T05_10_00_000Z-debug-0.log
`)
		return 1
	case "tools", "noisy":
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
		return 1
	}
	if mode == "noisy" {
		fmt.Fprintln(os.Stderr, "Test server running on stdio")
	}
	// A slow start: nothing is read or answered until the gate file exists.
	if gate := os.Getenv("ASK_MCP_TEST_GATE"); gate != "" {
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	drop := os.Getenv("ASK_MCP_TEST_DROP") // a tool to leave out, as a new version might
	// A page size of 2 makes the client follow cursors through 6 pages.
	s := sdk.NewServer(&sdk.Implementation{Name: "ask-test-server", Version: "1"}, &sdk.ServerOptions{PageSize: 2})
	add := func(t *sdk.Tool, h func(args map[string]any) (*sdk.CallToolResult, error)) {
		if t.Name == drop {
			return
		}
		if t.InputSchema == nil {
			t.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args map[string]any
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
			}
			if t.Name == "sleep" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return h(args)
		})
	}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	add(&sdk.Tool{Name: "echo", Description: "Echo the message",
		InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",` +
			`"properties":{"message":{"type":"string","$comment":"anything"}},"required":["message"],"additionalProperties":false}`)},
		func(a map[string]any) (*sdk.CallToolResult, error) {
			return text(fmt.Sprintf("echo: %v", a["message"])), nil
		})
	add(&sdk.Tool{Name: "read_only", Description: "Looks only", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(map[string]any) (*sdk.CallToolResult, error) { return text("looked"), nil })
	add(&sdk.Tool{Name: "fail", Description: "Fails as a tool"},
		func(map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk on fire"}}}, nil
		})
	add(&sdk.Tool{Name: "mixed", Description: "Every kind of content"},
		func(map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here you go"},
				&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
				&sdk.ResourceLink{URI: "demo://r/1", Name: "one", MIMEType: "text/plain"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "demo://r/2", MIMEType: "text/plain", Text: "inline text"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "demo://r/3", MIMEType: "application/gzip", Blob: []byte("12345")}},
			}, StructuredContent: map[string]any{"ignored": true}}, nil
		})
	add(&sdk.Tool{Name: "structured", Description: "Structured content only"},
		func(map[string]any) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"temperature": 21}}, nil
		})
	add(&sdk.Tool{Name: "env", Description: "Environment and directory"},
		func(map[string]any) (*sdk.CallToolResult, error) {
			wd, _ := os.Getwd()
			out := fmt.Sprintf("wd=%s\nASK_MCP_EXTRA=%s\nSECRET_SEEN=%s", wd, os.Getenv("ASK_MCP_EXTRA"), os.Getenv("ASK_TEST_SECRET"))
			if path := os.Getenv("ASK_MCP_TEST_WRITE"); path != "" {
				// What the sandbox allows (TestMCPInTheSandbox).
				out += fmt.Sprintf("\nwrite: %v", os.WriteFile(path, []byte("x"), 0o644))
			}
			return text(out), nil
		})
	add(&sdk.Tool{Name: "spawn", Description: "Starts a grandchild and returns its pid and the server's"},
		func(map[string]any) (*sdk.CallToolResult, error) {
			c := exec.Command("sleep", "300")
			if err := c.Start(); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("%d %d", os.Getpid(), c.Process.Pid)), nil
		})
	add(&sdk.Tool{Name: "exit", Description: "The server dies during the call"},
		func(map[string]any) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "panic: out of cheese")
			os.Exit(3)
			return nil, nil
		})
	add(&sdk.Tool{Name: "sleep", Description: "Never returns on its own"}, nil)
	add(&sdk.Tool{Name: "weird.name/with spaces", Description: "Name outside the provider charset"},
		func(map[string]any) (*sdk.CallToolResult, error) { return text("weird ran"), nil })
	add(&sdk.Tool{Name: strings.Repeat("long_", 14) + "end", Description: "A 73-character name"},
		func(map[string]any) (*sdk.CallToolResult, error) { return text("long ran"), nil })
	// A draft-07 tuple ("items" as an array) does not compile as 2020-12.
	add(&sdk.Tool{Name: "tuple", Description: "Takes a pair",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]}}}`)},
		func(map[string]any) (*sdk.CallToolResult, error) { return text("pair ok"), nil })
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
