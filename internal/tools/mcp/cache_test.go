package mcp

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/tools"
)

// startCached starts one server with the cache in dir, recording what
// Options.Starting is told.
func startCached(t *testing.T, dir, command string) (*Servers, *[][]string) {
	t.Helper()
	var mu sync.Mutex
	told := &[][]string{}
	// The servers live as long as the context: Close ends them.
	s, err := Start(context.Background(), commandServers(false, command), Options{
		Env: tools.ChildEnv(os.Environ()), CacheDir: dir, StartTimeout: 15 * time.Second,
		Starting: func(names []string) { mu.Lock(); *told = append(*told, names); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, told
}

func toolNames(s *Servers) []string {
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Info().Name)
	}
	return names
}

// A server whose tool list is cached does not hold up the start: its tools
// are declared at once, and a call to one waits until the server is up.
func TestMCPCachedListDoesNotWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gate := filepath.Join(t.TempDir(), "open")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	command := serverCommand("tools", "ASK_MCP_TEST_GATE="+gate)

	// First run: nothing cached, the start waits and says so.
	first, told := startCached(t, dir, command)
	want := toolNames(first)
	first.Close()
	if len(*told) != 2 || !slices.Equal((*told)[0], []string{"test"}) || (*told)[1] != nil {
		t.Errorf("Starting was told %q, want [[test] []]", *told)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mcp-tools", "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %q, want one", files)
	}
	for _, p := range []string{files[0], filepath.Dir(files[0])} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s has mode %v, want private", p, perm)
		}
	}
	if data, _ := os.ReadFile(files[0]); strings.Contains(string(data), gate) || !strings.Contains(string(data), `"version":"1"`) {
		t.Errorf("the cache holds an environment value, or no version: %s", data)
	}

	// Second run: the server is held in its start, yet Start returns with
	// the cached tools, having waited for nobody.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	second, told := startCached(t, dir, command)
	if got := toolNames(second); !slices.Equal(got, want) {
		t.Errorf("tools from the cache =\n%v\nwant\n%v", got, want)
	}
	for i, tool := range second.Tools() { // declared exactly as the server's own list declares them
		if got, real := tool.Info(), first.Tools()[i].Info(); !reflect.DeepEqual(got, real) {
			t.Errorf("from the cache %+v\nfrom the server %+v", got, real)
		}
	}
	if len(*told) != 0 {
		t.Errorf("Starting was told %q for a cached server", *told)
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("Start took %s", d)
	}
	done := make(chan string, 1)
	go func() {
		out, err := call(t, toolByName(t, second, "test__echo"), `{"message":"late"}`)
		if err != nil {
			out = err.Error()
		}
		done <- out
	}()
	select {
	case out := <-done:
		t.Fatalf("the call returned %q before the server was up", out)
	case <-time.After(300 * time.Millisecond):
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := <-done; out != "echo: late" {
		t.Errorf("call = %q, want echo: late", out)
	}
	second.Close()

	// A run that ends before its cached server is up (an answer with no
	// call) stops the server and keeps the entry for the next run.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	third, _ := startCached(t, dir, command)
	third.Close()
	if _, err := os.Stat(files[0]); err != nil {
		t.Errorf("the entry went with a run that ended early: %v", err)
	}
}

// A server whose list has changed since it was cached: the run keeps the
// tools it declared, a call to one the server no longer has says so, and
// the next run declares the new list.
func TestMCPCachedListRefreshed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, _ := startCached(t, dir, serverCommand("tools", "ASK_MCP_TEST_DROP="))
	first.Close()

	changed := serverCommand("tools", "ASK_MCP_TEST_DROP=echo")
	second, _ := startCached(t, dir, changed)
	_, err := call(t, toolByName(t, second, "test__echo"), `{"message":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "no longer has the tool echo") {
		t.Errorf("call to a tool gone from the server: %v", err)
	}
	if out, err := call(t, toolByName(t, second, "test__read_only"), `{}`); err != nil || out != "looked" {
		t.Errorf("call to a tool still there: %q, %v", out, err)
	}
	second.Close()

	third, _ := startCached(t, dir, changed)
	if slices.Contains(toolNames(third), "test__echo") {
		t.Errorf("the next run still declares the tool the server dropped: %v", toolNames(third))
	}
}

// A cached server that fails is reported, its tools answer with why, and
// its entry goes, so that the next run waits for it and fails up front.
func TestMCPCachedServerFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, _ := startCached(t, dir, serverCommand("tools"))
	first.Close()
	key := filepath.Join(dir, "mcp-tools")
	files, _ := filepath.Glob(filepath.Join(key, "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache files %q", files)
	}
	// The same command line (variables count by name), now a server that
	// dies at once: as if its package went missing since it was cached.
	s, err := Start(context.Background(), commandServers(false, serverCommand("crash")), Options{
		Env: tools.ChildEnv(os.Environ()), CacheDir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = call(t, toolByName(t, s, "test__echo"), `{"message":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "did not start") || !strings.Contains(err.Error(), "not found") {
		t.Errorf("call to a failed server's tool: %v", err)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("the failed server's entry is still there: %v", err)
	}
}
