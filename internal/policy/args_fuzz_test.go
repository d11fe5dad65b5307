package policy

import (
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/tools"
)

// FuzzOneReadingOfArguments holds the policy and the tools to one reading
// of a call's arguments: whatever arguments tools.CheckArguments lets
// through, the command the rules and the prompt see (Summary) is the
// command the shell tool decodes and runs.
func FuzzOneReadingOfArguments(f *testing.F) {
	root, err := tools.NewRoot(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	var params json.RawMessage
	for _, t := range tools.Builtins(root) {
		if t.Info().Name == "shell" {
			params = t.Info().Parameters
		}
	}
	for _, seed := range []string{
		`{"command":"git status"}`,
		`{"command":"git status","Command":"touch PWN"}`,
		`{"command":"git status","command":"touch PWN"}`,
		`{"Command":"touch PWN"}`,
		`{"command":"ls","timeout":5}`,
		`{"\u0063ommand":"x","command":"y"}`,
		`{"comman\u212a":"x"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if tools.CheckArguments(params, args) != nil {
			return
		}
		var asRun struct {
			Command string `json:"command"`
		}
		if json.Unmarshal([]byte(args), &asRun) != nil {
			return // the tool refuses it too
		}
		var exact map[string]any
		if json.Unmarshal([]byte(args), &exact) != nil {
			return
		}
		if s, ok := exact["command"].(string); ok {
			if got := Summary(args); got != s || s != asRun.Command {
				t.Fatalf("arguments %q: the policy reads %q, the shell would run %q", args, got, asRun.Command)
			}
		} else if asRun.Command != "" {
			t.Fatalf("arguments %q: the policy sees no command, the shell would run %q", args, asRun.Command)
		}
	})
}
