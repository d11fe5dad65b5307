// Package textproto is the text tool protocol of DESIGN §5, for models
// without native tool calling: the system prompt teaches a way of writing
// calls, and replies are read for calls in plain text.
//
// Calls are found anywhere in a reply, in any of these forms:
//
//   - the strict form, bare or in a ```json fence, several per reply:
//     {"tool": "read_file", "parameters": {"path": "go.mod"}, "terminate": false}
//     ("terminate": true marks the model's last action; a JSON array of
//     such objects is read too);
//   - {"name": "read_file", "arguments": {...}}, as many models were trained
//     to write, when the name is a declared tool;
//   - <tool_call>{...}</tool_call> and <function=NAME>…</function> with a
//     JSON body or <parameter=KEY>VALUE</parameter> tags, as local models'
//     chat templates emit them;
//   - the markdown form: a ```bash block whose lines start with a tool name,
//     `read_file go.mod` or `search -t "Generate" pkg/`, mapped to the
//     parameters by a per-tool argument mapping (argspec.go).
//
// The text outside calls is the model's message to the user. <think>
// blocks are dropped. A fragment that looks like a call but cannot be run
// (invalid or cut-off JSON, an unknown tool, a missing required parameter,
// a value of the wrong type) is a Problem. Every attempted call is
// answered (DESIGN §5):
//
//   - a reply whose calls all fail to parse becomes Turn.Invalid, a
//     correction giving each error and the form expected, which the loop
//     sends back as a user message; three such replies in a row stop the
//     run;
//   - a reply with runnable calls as well runs them; its broken calls stay
//     among them as unreadable calls (ToolCall.Unreadable), which the loop
//     answers in the same results message, each in its place, with the
//     error and the form expected. Such a reply is not a parse failure,
//     since something ran: it resets the count of three.
//
// Results go back as one user message in the format of FormatResults.
package textproto

import "fmt"

// ParseForm reads a --tool-protocol value naming a text form.
func ParseForm(s string) (Form, error) {
	switch f := Form(s); f {
	case JSON, Markdown:
		return f, nil
	}
	return "", fmt.Errorf("unknown text tool form %q: choose json or markdown", s)
}
