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
// unknown call, or one that could not be read. A call that named no tool
// that could be read has no tool attribute. A closing tag inside content
// is written as <\/tool_result> so that every block ends where it seems
// to.
func FormatResults(results []providers.ToolResult) string {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(`<tool_result call="`)
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte('"')
		if r.Name != "" {
			b.WriteString(` tool="`)
			b.WriteString(attr(r.Name))
			b.WriteByte('"')
		}
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

// withUnreadable returns a reply's runnable calls with, in each broken
// call's place (Problem.Call), an unreadable call that the loop answers
// with what was wrong and how to write the call. Broken calls get ids
// after the runnable ones', which keep theirs.
func withUnreadable(reply string, calls []providers.ToolCall, problems []Problem, p *parser, form Form) []providers.ToolCall {
	out := make([]providers.ToolCall, 0, len(calls)+len(problems))
	next := 0
	for k, pr := range problems {
		for len(out)+1 < pr.Call && next < len(calls) {
			out = append(out, calls[next])
			next++
		}
		out = append(out, providers.ToolCall{
			ID:         providers.GeneratedID([]byte(reply), len(calls)+k),
			Name:       pr.Tool,
			Unreadable: "This call could not be read and did not run: " + pr.Message + "\n" + expectedForm(p, pr.Tool, form),
		})
	}
	return append(out, calls[next:]...)
}
