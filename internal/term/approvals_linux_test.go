//go:build linux

package term

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/ask-cli/ask/internal/term/termtest"
)

func TestApprovals(t *testing.T) {
	t.Parallel()
	status := NewStatusLine(io.Discard, false, Palette{}, 80)
	for _, path := range []string{"", filepath.Join(t.TempDir(), "no-tty")} {
		p, confirm, closeTTY := Approvals(path, status, Palette{})
		if p != nil || confirm != nil {
			t.Errorf("%q: a prompter where no terminal opens", path)
		}
		closeTTY()
	}

	m, path := termtest.OpenPTY(t)
	p, confirm, closeTTY := Approvals(path, status, Palette{})
	defer closeTTY()
	if p == nil || confirm == nil {
		t.Fatalf("%s: no prompter on a terminal", path)
	}
	done := make(chan bool, 1)
	go func() { done <- confirm(context.Background(), "carry on? [y/N] ") }()
	termtest.ReadUntil(t, m, "carry on? [y/N] ")
	if _, err := m.WriteString("y\n"); err != nil {
		t.Fatal(err)
	}
	if !<-done {
		t.Error("typed y: not a yes")
	}
}
