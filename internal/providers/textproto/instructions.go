package textproto

import (
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
)

// Form is the way of calling tools the system prompt teaches. Replies are
// read in every form whichever is taught.
type Form string

const (
	// JSON teaches {"tool": "...", "parameters": {...}, "terminate": false}.
	JSON Form = "json"
	// Markdown teaches ```bash blocks holding `TOOL ARGUMENTS` lines.
	Markdown Form = "markdown"
)

// strictExample is the form of DESIGN §5, shown to the model.
const strictExample = `{"tool": "TOOL_NAME", "parameters": {"NAME": "VALUE"}, "terminate": false}`

// Instructions is the text appended to the system prompt to teach a form.
// It lists every tool with its parameters in one or two lines, so it
// stays small enough to send with every request.
func Instructions(tools []providers.Tool, form Form) string {
	if len(tools) == 0 {
		return ""
	}
	p := newParser(tools)
	var b strings.Builder
	b.WriteString("# Tools\n")
	if form == Markdown {
		b.WriteString("You can use tools. To call one, write a fenced bash block whose first word is the tool's name, one call a line:\n" +
			"```bash\nTOOL ARGUMENTS\n```\n" +
			"Quote arguments that contain spaces. Give multi-line text as a heredoc (<<'EOF' … EOF).\n")
	} else {
		b.WriteString("You can use tools. To call one, write a JSON object in exactly this form:\n" + strictExample + "\n" +
			`"parameters" holds the tool's arguments. "terminate": false means you want the result and will continue; ` +
			`"terminate": true means this is your last action and the run ends after it. ` +
			"You may write several calls in one reply.\n")
	}
	b.WriteString("The results come back in the next user message as <tool_result> blocks. " +
		"When you have the answer, reply with plain text and no tool call.\n\nTools:\n")
	for _, t := range tools {
		if t.Name == "" {
			continue
		}
		// A multi-line usage (a heredoc) continues, indented, after the
		// description.
		head, more := signature(t.Name, p.schemas[t.Name]), ""
		if form == Markdown {
			head, more, _ = strings.Cut(p.specs[t.Name].usage, "\n")
		}
		b.WriteString("- ")
		b.WriteString(head)
		if d := strings.TrimSpace(t.Description); d != "" {
			b.WriteString(" — ")
			b.WriteString(strings.Join(strings.Fields(d), " "))
		}
		b.WriteString("\n")
		if more != "" {
			b.WriteString("    " + strings.ReplaceAll(more, "\n", "\n    ") + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// signature renders a tool as read_file(path: string, offset?: integer —
// first line, 1-based).
func signature(name string, s schema) string {
	parts := make([]string, len(s.params))
	for i, p := range s.params {
		opt := "?"
		if p.required {
			opt = ""
		}
		typ := strings.Join(p.types, "|")
		if typ == "" {
			typ = "any"
		}
		parts[i] = p.name + opt + ": " + typ
		if p.desc != "" {
			parts[i] += " (" + strings.Join(strings.Fields(p.desc), " ") + ")"
		}
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// Correction is the user message that answers a reply whose calls could
// not be read: what was wrong, and the form expected.
func Correction(problems []Problem, tools []providers.Tool, form Form) string {
	p := newParser(tools)
	var b strings.Builder
	b.WriteString("Your reply tried to call a tool, but the call could not be read:\n")
	named := ""
	for _, pr := range problems {
		fmt.Fprintf(&b, "- %s\n", pr.Message)
		if named == "" && pr.Tool != "" {
			named = pr.Tool
		}
	}
	b.WriteString(expectedForm(p, named, form))
	b.WriteString("\nThe tools are: " + strings.Join(p.names, ", ") + ". To answer without a tool, reply with plain text only.")
	return b.String()
}

// expectedForm tells the model how to write a call in form, with the
// usage of the tool named when it is a declared one.
func expectedForm(p *parser, named string, form Form) string {
	if form == Markdown {
		example := "TOOL ARGUMENTS"
		if spec, ok := p.specs[named]; ok {
			example = spec.usage
		}
		return "To call a tool, write a fenced bash block holding one line per call:\n```bash\n" + example + "\n```"
	}
	s := "To call a tool, write one JSON object in exactly this form:\n" + strictExample
	if _, ok := p.tools[named]; ok {
		s += "\nFor " + named + ": " + signature(named, p.schemas[named])
	}
	return s
}
