package table

import (
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/stage"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

func TestPrint(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := Print(&b, []string{"NAME", "RISK"}, []string{"read_file", "read"}, []string{"shell", "exec"}); err != nil {
		t.Fatal(err)
	}
	want := "NAME       RISK\nread_file  read\nshell      exec\n"
	if b.String() != want {
		t.Errorf("got\n%q, want\n%q", b.String(), want)
	}
}

// A model table has the columns some model filled, and a dash where
// another left one empty.
func TestModels(t *testing.T) {
	t.Parallel()
	yes := true
	var b strings.Builder
	err := Models(&b, []providers.Model{
		{ID: "gpt-4o", Name: "gpt-4o", ContextLength: 128000, Tools: &yes},
		{ID: "llama3", Size: 3 << 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "ID CONTEXT TOOLS SIZE" {
		t.Errorf("header %q, want the filled columns only", lines[0])
	}
	if got := strings.Join(strings.Fields(lines[1]), " "); got != "gpt-4o 128000 yes -" {
		t.Errorf("row %q", got)
	}
	if got := strings.Join(strings.Fields(lines[2]), " "); got != "llama3 - - 3.0 GiB" {
		t.Errorf("row %q", got)
	}

	b.Reset()
	if err := Models(&b, nil); err != nil || strings.TrimSpace(b.String()) != "ID" {
		t.Errorf("no models: %q, %v", b.String(), err)
	}
}

func TestProviders(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	err := Providers(&b, []stage.ProviderInfo{
		{Name: "openai", Protocol: "openai", BaseURL: "https://api.openai.com/v1", KeyEnv: []string{"OPENAI_API_KEY"}, KeySet: true, KeyRequired: true, NativeTools: true, Streaming: true, Model: "gpt-4o-mini"},
		{Name: "ollama", Protocol: "ollama", KeyEnv: []string{"OLLAMA_API_KEY"}},
		{Name: "command", Protocol: "command"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"OPENAI_API_KEY (set)", "OLLAMA_API_KEY (optional, unset)", "none needed", "text protocol", "native"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// A run's working directory under HOME is written as ~/…, and a
// prompt is one short line shown safely.
func TestRuns(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.Local)
	err := Runs(&b, []history.Entry{
		{ID: "a1", Time: at, Workdir: "/home/me/src/ask", Status: "completed", Prompt: "why\ndoes make fail\x1b[2K?"},
		{ID: "b2", Time: at, Workdir: "/home/meg", Status: "failed", Prompt: "hi"},
		{ID: "c3", Time: at, Workdir: "/home/meg", Status: "completed", Prompt: "sub", ParentID: "b2", Depth: 1},
	}, "/home/me/")
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"~/src/ask", "/home/meg", `why does make fail\u001b[2K?`, "2026-01-02 03:04", "\n└ c3 "} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// A server is one line with what it runs and its notes, its tools below
// it, and an error in one line.
func TestMCP(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	err := MCP(&b, []mcp.Listing{
		{Name: "files", Source: "config ~/.config/ask/config.json", Transport: "stdio", Command: []string{"npx", "server-files"},
			Env: []string{"ROOT"}, Sandbox: true,
			Tools: []mcp.ListedTool{{Name: "read", Declared: "files__read", Description: "Read a file.\nMore detail."}}},
		{Name: "web", Source: "flag --mcp", Transport: "http", URL: "http://127.0.0.1:9/mcp", Headers: []string{"Authorization"}, Disabled: true,
			Error: "connect: connection refused\nretried twice"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "files\tstdio\tnpx server-files\t(sandboxed; env ROOT; config ~/.config/ask/config.json)\n" +
		"  files__read\tRead a file.\n" +
		"web\thttp\thttp://127.0.0.1:9/mcp\t(disabled; headers Authorization; flag --mcp)\n" +
		"  error: connect: connection refused …\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	if err := MCP(&b, nil); err != nil || !strings.HasPrefix(b.String(), "no MCP servers") {
		t.Errorf("no servers: %q, %v", b.String(), err)
	}
}
