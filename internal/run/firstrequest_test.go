package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/tools"
)

// firstRequest is the body a run of provider p would send first in a
// working directory holding what files says.
func firstRequest(t *testing.T, p catalog.Provider, toolProtocol string, files map[string]string) []byte {
	t.Helper()
	e := testEnv(t, nil)
	e.Offline = true
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(e.Wd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{Provider: Given(p.Name, "test"), Model: Given("some-model-name", "test"), ToolProtocol: Given(toolProtocol, "test")}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), s, e)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Declared) != len(tools.Builtins(nil)) {
		t.Fatalf("%s: %d tools declared, want every built-in", p.Name, len(r.Declared))
	}
	body, err := r.FirstRequest("why does make fail here?")
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// The first request, with every built-in tool and no AGENTS.md, stays
// under 8 KB in every protocol; AGENTS.md adds at most its cap and a frame.
func TestFirstRequestIsSmall(t *testing.T) {
	t.Parallel()
	const limit = 8 << 10
	huge := strings.Repeat("Keep functions short and run go vet.\n", 1000)
	for _, p := range catalog.All() {
		if p.LocalProgram {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			for _, tp := range []string{ToolProtocolNative, ToolProtocolJSON, ToolProtocolMarkdown} {
				body := firstRequest(t, p, tp, nil)
				t.Logf("%s, %s tools: first request %d bytes", p.Name, tp, len(body))
				if len(body) >= limit {
					t.Errorf("%s, %s tools: first request is %d bytes, want under %d", p.Name, tp, len(body), limit)
				}
			}
			plain := firstRequest(t, p, ToolProtocolNative, nil)
			withProject := firstRequest(t, p, ToolProtocolNative, map[string]string{"AGENTS.md": huge})
			if grown := len(withProject) - len(plain); grown > prompts.MaxProjectBytes+600 || grown < prompts.MaxProjectBytes/2 {
				t.Errorf("%s: AGENTS.md of %d bytes grew the request by %d, want about the cap %d", p.Name, len(huge), grown, prompts.MaxProjectBytes)
			}
		})
	}
}
