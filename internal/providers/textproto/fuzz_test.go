package textproto

import (
	"os"

	"github.com/ask-cli/ask/internal/providers"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds the parser arbitrary replies, seeded with the corpus. It
// must never panic, every call must name a declared tool with a JSON object
// for arguments, and the text must come from the reply.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("```bash\nedit_file a <<'X' <<Y\nx\nX\n")
	f.Add("<tool_call><function=shell><parameter=command>ls")
	f.Add(`[{"tool":"shell","parameters":{"command":"ls"}},{"tool":"x"}]`)
	tools := testTools(f)
	f.Fuzz(func(t *testing.T, reply string) {
		checkSpans(t, reply, tools)
		res := Parse(reply, tools)
		checkInvariants(t, res, tools)
		if len(res.Text) > len(reply) {
			t.Errorf("text %q is longer than the reply %q", res.Text, reply)
		}
		if res.Terminate && len(res.Calls) == 0 {
			t.Errorf("terminate without calls")
		}
		if len(res.Calls) == 0 && len(res.Problems) == 0 && !strings.Contains(reply, "think>") && res.Text != tidy(reply) {
			t.Errorf("a reply without calls lost text: %q became %q", reply, res.Text)
		}
	})
}

// checkSpans holds the scanner to what Parse relies on when it cuts calls
// out of the reply: spans lie inside the reply, in order, and never
// overlap. An overlap once sliced the reply backwards and panicked.
func checkSpans(t *testing.T, reply string, tools []providers.Tool) {
	t.Helper()
	p := newParser(tools)
	p.reply, p.lastClose = reply, map[string]int{}
	at := 0
	for _, sp := range p.scan(reply, 0, len(reply), true, false) {
		if sp.start < at || sp.end < sp.start || sp.end > len(reply) {
			t.Fatalf("span [%d,%d) after offset %d in a reply of %d bytes: %q", sp.start, sp.end, at, len(reply), reply)
		}
		at = sp.end
	}
}
