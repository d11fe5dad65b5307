package table

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// FuzzListings feeds what an MCP server or a tools file says about itself
// (names, descriptions, an error) to `ask mcp list --tools` and `ask
// tools list`: whatever it holds (OSC 52, CSI in its C1 form, DCS, BEL,
// bidi overrides, invalid UTF-8), the listing shows it escaped.
func FuzzListings(f *testing.F) {
	f.Add("fs", "read_file", "copy \x1b]52;c;cm0=\x07 \u202egnp.exe", "boom \xc2\x9b2J")
	f.Add("m\x1bP", "t\u2066", "\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "\xff\xfe")
	f.Fuzz(func(t *testing.T, server, tool, desc, errText string) {
		var out strings.Builder
		entries := []mcp.Listing{{Name: server, Transport: "stdio", Command: []string{server, desc}, Source: "config",
			Tools: []mcp.ListedTool{{Name: tool, Declared: server + "__" + tool, Description: desc}}, Error: errText}}
		if err := MCP(&out, entries); err != nil {
			t.Fatal(err)
		}
		if err := Tools(&out, "agent", []tools.Info{{Name: tool, Description: desc, Risk: tools.Exec}}); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 in %q", got)
		}
		for _, r := range got {
			if r != '\n' && r != '\t' && termtext.Dangerous(r) {
				t.Fatalf("%U reached the terminal: %q", r, got)
			}
		}
	})
}
