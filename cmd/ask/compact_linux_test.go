//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/term/termtest"
)

// At a terminal, the status line says while ask compacts the conversation,
// and a line stays after, saying what it did (DESIGN §9, Long runs).
func TestStatusLineSaysWhenAskCompacts(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40-step run at a terminal")
	}
	t.Parallel()
	m, ttyPath := termtest.OpenPTY(t)
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	defer tty.Close()
	var screen strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	const steps = 40
	var mu sync.Mutex
	next := 0
	model := &fakeprovider.Windowed{Protocol: "openai", Window: 6000, Answer: func(body []byte) fakeprovider.Reply {
		if fakeprovider.IsSummaryRequest(body, loop.SummaryPrompt) {
			time.Sleep(600 * time.Millisecond) // long enough for the line to show it
			return fakeprovider.Reply{Text: "Summary: every step printed numbers."}
		}
		mu.Lock()
		defer mu.Unlock()
		next++
		if next > steps {
			return fakeprovider.Reply{Text: "done"}
		}
		cmd := fmt.Sprintf(`seq %d %d`, next*1000, next*1000+300)
		return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprint("c", next), "shell", fmt.Sprintf(`{"command":%q}`, cmd))}}
	}}
	srv := fakeprovider.StartWindowed(model)
	defer srv.Close()

	var out strings.Builder
	env := map[string]string{"ASK_PROVIDER": "openai", "ASK_BASE_URL": srv.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000",
		"XDG_STATE_HOME": t.TempDir()}
	stdio := &IO{
		In: strings.NewReader(""), Out: &out, Err: tty,
		InTTY: true, ErrTTY: true, TTYPath: ttyPath, ErrWidth: func() int { return 200 },
		Getenv:  func(k string) string { return env[k] },
		Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH")} },
		HTTP:    &http.Client{Timeout: 30 * time.Second},
		Now:     time.Now,
		Wd:      t.TempDir(),

		sandboxCheck: noSandbox,
	}
	code := runCLI(context.Background(), []string{"ask", "--yes", "--no-stream", "--context-window", "6000", "count"}, stdio)
	tty.Close()
	m.SetReadDeadline(time.Now().Add(2 * time.Second))
	<-read
	shown := screen.String()
	if code != 0 || strings.TrimSpace(out.String()) != "done" {
		t.Fatalf("exit %d, stdout %q; terminal:\n%q", code, out.String(), shown)
	}
	if !strings.Contains(shown, "· compacting the conversation to fit the model's window · ") {
		t.Errorf("the status line never said it was compacting:\n%q", shown)
	}
	if !strings.Contains(shown, "ask: compacted the conversation to fit the model's 6000-token window: ") {
		t.Errorf("no line says what the compaction did:\n%q", shown)
	}
}
