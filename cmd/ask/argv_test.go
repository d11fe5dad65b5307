package main

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
)

// testSpec is the command tree of a run, as the argv pass reads it.
var testSpec = sync.OnceValue(func() *commandSpec {
	return mainSpec(testIO())
})

func testIO() *IO {
	return &IO{Getenv: func(string) string { return "" }, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
}

// TestReadArgs checks the command lines urfave/cli is given: each flag
// word long with its value after "=", a run of switches split, each flag
// given to the deepest command on the line that declares it wherever it
// was typed, and the positional words after "--".
func TestReadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"short and long", []string{"-q", "--quiet", "hi"}, []string{"--quiet", "--quiet", "--", "hi"}},
		{"a run of switches", []string{"-qy", "--yes", "hi"}, []string{"--quiet", "--yes", "--yes", "--", "hi"}},
		{"a run ending in a flag with a value", []string{"-qa", "x.png", "hi"}, []string{"--quiet", "--attach=x.png", "--", "hi"}},
		{"a value written with =", []string{"-a=x.png", "hi"}, []string{"--attach=x.png", "--", "hi"}},
		{"a value that starts with a dash", []string{"--temperature", "-1", "hi"}, []string{"--temperature=-1", "--", "hi"}},
		{"a flag with a value inside a run is unknown", []string{"-aq", "x.png", "hi"}, []string{"-aq", "--", "x.png", "hi"}},
		{"a run with an unknown letter", []string{"-qZ", "hi"}, []string{"-qZ", "--", "hi"}},
		{"a run after the prompt is the prompt's", []string{"explain", "grep", "-qv"}, []string{"--", "explain", "grep", "-qv"}},
		{"a dash word after the prompt is the prompt's", []string{"what", "is", "-5", "squared"}, []string{"--", "what", "is", "-5", "squared"}},
		{"an output flag after the prompt", []string{"hi", "--json", "-q", "--max-steps", "3"}, []string{"--json", "--quiet", "--max-steps=3", "--", "hi"}},
		{"a narrowing switch after the prompt", []string{"hi", "--safe", "--deny-tool", "shell"}, []string{"--safe", "--deny-tool=shell", "--", "hi"}},
		{"after --, nothing moves", []string{"-q", "--", "-y", "hi"}, []string{"--quiet", "--", "-y", "hi"}},
		{"a run flag after a subcommand goes to the main command", []string{"tools", "run", "--safe"}, []string{"--safe", "tools", "run"}},
		{"before or after the subcommand, the same", []string{"--safe", "tools", "run"}, []string{"--safe", "tools", "run"}},
		{"a subcommand's own flag", []string{"tools", "list", "--json"}, []string{"tools", "list", "--json"}},
		{"a subcommand's own flag typed before it", []string{"--json", "tools", "list"}, []string{"tools", "list", "--json"}},
		{"a main flag without a subcommand's", []string{"--json", "tools", "run"}, []string{"--json", "tools", "run"}},
		{"flags after a subcommand's arguments", []string{"provider", "request", "-qp", "openai", "hi", "-m", "x"},
			[]string{"--quiet", "--provider=openai", "--model=x", "provider", "request", "--", "hi"}},
		{"a subcommand's unknown flag stays with it", []string{"tools", "-Z", "x"}, []string{"tools", "-Z", "--", "x"}},
		{"a subcommand's -- stops it", []string{"provider", "request", "--", "-q"}, []string{"provider", "request", "--", "-q"}},
		{"a command word after -- is the prompt's", []string{"--", "tools", "list"}, []string{"--", "tools", "list"}},
		{"a command word after the prompt is the prompt's", []string{"hi", "tools"}, []string{"--", "hi", "tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line, err := readArgs(testSpec(), tt.args)
			if err != nil {
				t.Fatalf("readArgs(%q): %v", tt.args, err)
			}
			if got, want := line.argv("ask"), append([]string{"ask"}, tt.want...); !slices.Equal(got, want) {
				t.Errorf("readArgs(%q)\n got %q\nwant %q", tt.args, got, want)
			}
		})
	}
}

// TestReadArgsRefuses checks the lines the pass refuses: a flag after the
// prompt that could widen what the model may do (a file name from xargs
// spelling --provider=command must not choose what runs), a switch turned
// off there, and a flag whose value is missing.
func TestReadArgsRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--safe", "review these files:", "--provider=command", "x"}, "--provider=command after the prompt could widen"},
		{[]string{"review:", "--command=sh", "x"}, "--command=sh after the prompt"},
		{[]string{"review:", "-y"}, "--yes after the prompt"},
		{[]string{"review:", "--allow-tool", "shell"}, "--allow-tool=shell after the prompt"},
		{[]string{"review:", "--sandbox=off"}, "--sandbox=off after the prompt"},
		{[]string{"review:", "--mcp", "x"}, "--mcp=x after the prompt"},
		{[]string{"--safe", "review:", "--allow-host", "evil.example"}, "--allow-host=evil.example after the prompt"},
		{[]string{"--safe", "review:", "--safe=false"}, "--safe=false after the prompt"},
		{[]string{"review:", "--base-url=http://evil"}, "--base-url=http://evil after the prompt"},
		{[]string{"hi", "--max-steps"}, "--max-steps needs a value: give a whole number"},
		{[]string{"--timeout"}, "--timeout needs a value: give a duration"},
	}
	for _, tt := range tests {
		_, err := readArgs(testSpec(), tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("readArgs(%q) = %v, want an error with %q", tt.args, err, tt.want)
			continue
		}
		if strings.Contains(tt.want, "after the prompt") && !strings.Contains(err.Error(), "put -- before the prompt") {
			t.Errorf("readArgs(%q) = %v: it does not name --", tt.args, err)
		}
		if exitCode(err) != exitUsage {
			t.Errorf("readArgs(%q): exit %d, want %d", tt.args, exitCode(err), exitUsage)
		}
	}
}

// FuzzReadArgs checks that any command line is read without a panic, that
// what it writes reads back to itself (every flag long, every positional
// word after "--"), and that it invents no word.
func FuzzReadArgs(f *testing.F) {
	for _, seed := range []string{
		"-q --quiet hi", "-qy --yes hi", "-qa x.png hi", "-aq x.png hi", "explain grep -qv",
		"hi -y", "-q -- -y hi", "-q provider request -qp openai --quiet hi -q", "tools -a x.png",
		"-qp openai provider request hi", "--timeout", "hi --timeout", "-- -- -q", "log search -q --",
		"--safe tools run", "tools run --safe=false", "hi --json=false", "-p=openai hi",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		args := strings.Fields(input)
		line, err := readArgs(testSpec(), args)
		if err != nil {
			return
		}
		once := line.argv("ask")
		again, err := readArgs(testSpec(), once[1:])
		if err != nil {
			t.Fatalf("readArgs(%q) wrote %q, which it refuses: %v", args, once, err)
		}
		if twice := again.argv("ask"); !slices.Equal(twice, once) {
			t.Fatalf("readArgs(%q) wrote %q, which reads as %q", args, once, twice)
		}
		// Each positional word, and each value, is a word given.
		given := map[string]int{}
		for _, a := range args {
			given[a]++
		}
		words := once[1:]
		if i := slices.Index(words, "--"); i >= 0 {
			for _, w := range words[i+1:] {
				if given[w]--; given[w] < 0 {
					t.Fatalf("readArgs(%q) wrote %q: the word %q was not given as often", args, once, w)
				}
			}
			words = words[:i]
		}
		for _, w := range words {
			if _, value, ok := strings.Cut(w, "="); ok && !strings.Contains(strings.Join(args, " "), value) {
				t.Fatalf("readArgs(%q) wrote %q: the value %q was not given", args, once, value)
			}
		}
	})
}

// The argv pass knows a command by its name in the table until the line
// names it: the name must be the one the command declares, or the command
// could not be reached.
func TestCommandTableNames(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		built := c.build(testIO())
		if built.Name != c.name || len(built.Aliases) > 0 || built.Hidden {
			// The argv pass and the command-name suggestions know the
			// command by the table's name alone until it is built.
			t.Errorf("the table's %q builds the command %q (aliases %q, hidden %v)", c.name, built.Name, built.Aliases, built.Hidden)
		}
	}
	if len(commands) != len(subcommands(testIO())) {
		t.Errorf("the table has %d commands, help lists %d", len(commands), len(subcommands(testIO())))
	}
}

// The tests share one tree (testSpec) across parallel tests; a command
// read on first use is read once, whichever reads it first (a data race
// under -race otherwise).
func TestSubcommandReadOnce(t *testing.T) {
	t.Parallel()
	spec := mainSpec(testIO())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			line, err := readArgs(spec, []string{"tools", "run", "--safe", "read_file"})
			if err != nil || len(line.path) != 3 || line.path[2].name != "run" {
				t.Errorf("tools run: path %v, error %v", len(line.path), err)
			}
		})
	}
	wg.Wait()
}
