package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRenderResult(t *testing.T) {
	text := func(s string) *sdk.TextContent { return &sdk.TextContent{Text: s} }
	tests := []struct {
		name    string
		res     *sdk.CallToolResult
		want    string
		wantErr bool
	}{
		{"text", &sdk.CallToolResult{Content: []sdk.Content{text("Echo: hi")}}, "Echo: hi", false},
		{"texts are joined by lines", &sdk.CallToolResult{Content: []sdk.Content{text("a"), text("b")}}, "a\nb", false},
		{"isError", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{text("MCP error -32602: Tool x not found")}}, "MCP error -32602: Tool x not found", true},
		{"isError without text", &sdk.CallToolResult{IsError: true}, "the tool reported an error without a message", true},
		{"nothing", &sdk.CallToolResult{}, "(the tool returned no content)", false},
		{"text wins over the same data as structuredContent",
			&sdk.CallToolResult{Content: []sdk.Content{text("Allowed directories:\n/srv")}, StructuredContent: map[string]any{"content": "Allowed directories:\n/srv"}},
			"Allowed directories:\n/srv", false},
		{"structuredContent when there is no text",
			&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 999)}}, StructuredContent: []any{1, "two"}},
			"[image image/png, 999 B]\n[1,\"two\"]", false},
		{"audio and an unknown type",
			&sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 2_500_000)}, &sdk.ImageContent{Data: []byte{1}}}},
			"[audio audio/wav, 2.5 MB]\n[image of unknown type, 1 B]", false},
		{"resource link", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "demo://x", Name: "x", Description: "an example"}}},
			`[resource link "x": demo://x an example]`, false},
		{"embedded text and blob", &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", Text: "contents"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", Blob: make([]byte, 1500)}},
			&sdk.EmbeddedResource{}}},
			"[resource file:///a.txt]\ncontents\n[resource file:///a.bin, of unknown type, 1.5 kB]\n[empty resource]", false},
		//lint:ignore SA1019 a server may still send sampling's kinds while they are deprecated
		{"a kind the model cannot see", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ToolUseContent{ID: "1", Name: "x"}}}, "[tool_use content]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := renderResult(tt.res)
			if got != tt.want || isErr != tt.wantErr {
				t.Errorf("renderResult = %q, %v; want %q, %v", got, isErr, tt.want, tt.wantErr)
			}
		})
	}
}

func TestRenderResultIsBounded(t *testing.T) {
	big := strings.Repeat("é", maxResult) // 2 bytes a rune: the cut falls inside one
	got, _ := renderResult(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: big}}})
	if len(got) > maxResult+100 {
		t.Errorf("result is %d bytes", len(got))
	}
	if !strings.HasSuffix(got, "[... result cut: 65536 of 131072 bytes shown ...]") {
		t.Errorf("result ends %q", got[len(got)-80:])
	}
	if !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Error("the cut split a rune")
	}
}
