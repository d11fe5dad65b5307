package term

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools"
)

// FuzzTerminalPaths feeds a model's or a server's text (C0 and C1
// controls, OSC, CSI and DCS sequences, bidi overrides, invalid UTF-8)
// through what this package prints: the approval question and every
// argument under it, the status line, a call's line, a note, and the
// streamed answer.
// Nothing that can drive the terminal may come out; only ask's own
// colours would, and the palette here has none.
func FuzzTerminalPaths(f *testing.F) {
	f.Add("deploy", "docs/index.md", "target", "prod \x1b]52;c;eA==\x07", "\u202egnp.exe")
	f.Add("shell", "rm -rf x\r\x1b[2K\x1b[1Agit status", "note", "\xc2\x9b2J \x1bP1$r\x1b\\", "\xff\xfe")
	f.Fuzz(func(t *testing.T, name, summary, argName, argValue, answer string) {
		var out strings.Builder
		c := policy.Pending{Name: name, Summary: summary, Risk: tools.Exec, Always: "any " + summary,
			Args: []policy.Arg{{Name: argName, Value: argValue}, {Name: "old_text", Value: argValue}, {Name: "new_text", Value: answer}}}
		out.WriteString(arguments(c, "  "))
		out.WriteString(question(c))
		s := NewStatusLine(io.Discard, true, Palette{}, 80)
		s.last = loop.Progress{Step: 1, MaxSteps: 3, Tool: name, Arguments: `{"command":` + jsonString(argValue) + `}`}
		out.WriteString(s.text(0))
		notes := s.Above(&out)
		io.WriteString(notes, "ask: warning: "+argValue+"\n")
		calls := NewCalls()
		calls.Line(records.Event{Type: records.TypeToolStarted, ID: "c1", Name: name, Arguments: `{"command":` + jsonString(argValue) + `}`}, 80)
		line, _ := calls.Line(records.Event{Type: records.TypeToolFinished, ID: "c1", Name: name, Content: answer, IsError: true}, 80)
		out.WriteString(line + "\n")
		a := NewAnswer(&termtext.Writer{W: &out}, s)
		a.Text(answer)
		got := out.String()
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 reached the terminal: %q", got)
		}
		for _, r := range got {
			if r != '\n' && r != '\t' && termtext.Dangerous(r) {
				t.Fatalf("%U reached the terminal: %q", r, got)
			}
		}
	})
}

// jsonString quotes s as JSON would, enough for the status line's reader.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + "0123456789abcdef"[r>>4:r>>4+1] + "0123456789abcdef"[r&15:r&15+1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
