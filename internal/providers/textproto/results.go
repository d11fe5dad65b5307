package textproto

import (
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

const resultClose = "</tool_result>"

// FormatResults renders the results of one step as the text of one user
// message, in call order:
//
//	<tool_result call="1" tool="read_file">
//	1: module example.com/x
//	</tool_result>
//	<tool_result call="2" tool="shell" error="true">
//	exit 1 …
//	</tool_result>
//
// call is the call's position in the reply that asked for it, counted from
// 1 (the model never sees call ids); error="true" marks a failed, denied or
// unknown call. A closing tag inside content is written as <\/tool_result>
// so that every block ends where it seems to.
func FormatResults(results []providers.ToolResult) string {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(`<tool_result call="`)
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteString(`" tool="`)
		b.WriteString(attr(r.Name))
		b.WriteByte('"')
		if r.IsError {
			b.WriteString(` error="true"`)
		}
		b.WriteString(">\n")
		content := strings.ReplaceAll(r.Content, resultClose, `<\/tool_result>`)
		b.WriteString(content)
		if !strings.HasSuffix(content, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(resultClose)
	}
	return b.String()
}

// attr keeps a tool name from breaking out of its attribute.
func attr(s string) string {
	return strings.NewReplacer(`"`, "&quot;", "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}
