package stage

import (
	"bytes"
	"strings"
	"testing"
)

// JSON shown at a terminal (ask tools show, --json) carries a server's or
// a model's text escaped: a C1 CSI or a bidi override in a description
// never reaches the terminal raw, and a pipe still gets the bytes as they
// are.
func TestWriteValueEscapesAtATerminal(t *testing.T) {
	t.Parallel()
	v := map[string]string{"description": "csi \u009b2J bidi \u202egnp.exe"}
	var tty, pipe bytes.Buffer
	if err := WriteValue(&tty, true, v); err != nil {
		t.Fatal(err)
	}
	if err := WriteValue(&pipe, false, v); err != nil {
		t.Fatal(err)
	}
	if got := tty.String(); strings.ContainsAny(got, "\u009b\u202e") || !strings.Contains(got, `csi \u009b2J bidi \u202egnp.exe`) {
		t.Errorf("at a terminal: %q", got)
	}
	if !strings.Contains(pipe.String(), "\u202e") {
		t.Errorf("into a pipe the value changed: %q", pipe.String())
	}
}
