package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// raceEnabled is set under the race detector (race_test.go).
var raceEnabled bool

// oneShot is the command line of the bench's one-shot answer.
var oneShot = []string{"ask", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "fake-model",
	"--yes", "--quiet", "--workdir", ".", "say hello"}

// parseAsRun builds the app as runCLI does and runs it on args with an
// action that reads the typed flags, as every run does first.
func parseAsRun(args []string) error {
	stdio := &IO{Getenv: func(string) string { return "" }, Out: io.Discard, Err: io.Discard}
	subs := subcommands(stdio)
	line, err := readArgs(mainSpec(subs), args[1:])
	if err != nil {
		return err
	}
	useConfigFile(line, stdio)
	stdio.typed = line.typed()
	app := appWith(stdio, subs)
	app.Action = func(c *cli.Context) error { flagSettings(c, stdio); return nil }
	return app.RunContext(context.Background(), line.argv(args[0]))
}

// Building the command tree and parsing a one-shot command line is paid
// by every answer. It took 7,400 allocations when urfave/cli's Names ran a
// regular expression about n² times per run and every subcommand was
// built in full; about 2,030 now, some 20 a run flag. The budget catches
// a return of either, in allocations, not time, with room for a few more
// flags.
func TestStartAllocations(t *testing.T) {
	budget := 2300.0
	if raceEnabled {
		budget = 2800 // the race detector moves more values to the heap
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := parseAsRun(oneShot); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > budget {
		t.Errorf("building the tree and parsing a one-shot command line: %.0f allocations, budget %.0f", allocs, budget)
	}
}

// go test -run XXX -bench Start -benchmem ./cmd/ask/
func BenchmarkStartParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := parseAsRun(oneShot); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStartTree(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		stdio := &IO{Getenv: func(string) string { return "" }, Out: io.Discard, Err: io.Discard}
		_ = appWith(stdio, subcommands(stdio))
	}
}

// BenchmarkStartOneShot is a whole one-shot answer in process, against the
// fake provider: what a run allocates beyond the runtime and package inits.
func BenchmarkStartOneShot(b *testing.B) {
	b.ReportAllocs()
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		b.Fatal(err)
	}
	var replies []fakeprovider.Reply
	for i := 0; i < b.N+1; i++ {
		replies = append(replies, fakeprovider.Reply{Text: "Hello."})
	}
	srv := fakeprovider.Start(replies...)
	defer srv.Close()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "OPENAI_API_KEY": "fake-bench-not-a-key-000000"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stdio := &IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: func(k string) string { return env[k] },
			Environ: func() []string { return nil }, HTTP: &http.Client{Timeout: 30 * time.Second}, Now: time.Now, Wd: dir, Net: providers.DefaultNet, sandboxCheck: noSandbox}
		code := runCLI(context.Background(), []string{"ask", "--provider", "openai", "--base-url", srv.URL, "--model", "fake-model", "--yes", "--quiet", "--workdir", dir, "say hello"}, stdio)
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
