// Package command is the `command` provider: the model is a program run
// once per step, such as `ollama run qwen3` or `llama-cli -m model.gguf`,
// that reads the conversation on stdin and writes its reply on stdout.
//
// Such a program has no tool calling of its own, so the provider always
// runs under the text tool protocol (internal/providers/textproto) over
// Plain, a protocol whose messages are plain text.
//
// The conversation goes to the program's stdin rendered as plain text:
// each message is a header line naming its role in square brackets, then
// its text, then a blank line; the system prompt comes first and a last
// "[assistant]" header invites the reply:
//
//	[system]
//	You are ask …
//
//	[user]
//	what is in go.mod?
//
//	[assistant]
//	{"tool": "read_file", "parameters": {"path": "go.mod"}, "terminate": false}
//
//	[user]
//	<tool_result call="1" tool="read_file">
//	1: module example.com/x
//	</tool_result>
//
//	[assistant]
//
// The reply is what the program prints on stdout, cleaned of terminal
// control: ANSI escape sequences, lines overwritten with carriage returns
// (spinners and progress bars), braille spinner characters, backspaces, and
// the "Thinking... / ...done thinking." block `ollama run` prints for
// reasoning models.
package command
