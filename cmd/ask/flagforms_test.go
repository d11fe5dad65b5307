package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// reorderFresh is reorderArgs with a run's app built for the call, as a run
// builds it: reordering builds the command named in full.
func reorderFresh(args []string) []string {
	app, fill := newRunApp(&IO{Getenv: func(string) string { return "" }, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	return reorderArgs(app, fill, args)
}

// TestReorderArgsWritesFlagsLong checks the command lines urfave/cli is
// given: each flag word long, a run of switches split, each command's words
// written with its own flags, a flag typed before a subcommand that has it
// given to the subcommand, and the prompt's words left alone.
func TestReorderArgsWritesFlagsLong(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"short and long", []string{"-q", "--quiet", "hi"}, []string{"--quiet", "--quiet", "--", "hi"}},
		{"a run of switches", []string{"-qy", "--yes", "hi"}, []string{"--quiet", "--yes", "--yes", "--", "hi"}},
		{"a run ending in a flag with a value", []string{"-qa", "x.png", "hi"}, []string{"--quiet", "--attach", "x.png", "--", "hi"}},
		{"a value written with =", []string{"-a=x.png", "hi"}, []string{"--attach=x.png", "--", "hi"}},
		{"a flag with a value inside a run", []string{"-aq", "x.png", "hi"}, []string{"-aq", "--", "x.png", "hi"}},
		{"a run with an unknown letter", []string{"-qZ", "hi"}, []string{"-qZ", "--", "hi"}},
		{"a run after the prompt is the prompt's", []string{"explain", "grep", "-qv"}, []string{"--", "explain", "grep", "-qv"}},
		{"a known flag after the prompt moves", []string{"hi", "-y"}, []string{"--yes", "--", "hi"}},
		{"after --, nothing moves", []string{"-q", "--", "-y", "hi"}, []string{"--quiet", "--", "-y", "hi"}},
		{"a subcommand's flags, with its own", []string{"provider", "request", "-qp", "openai", "--quiet", "hi", "-q"},
			[]string{"provider", "request", "--quiet", "--provider", "openai", "--quiet", "hi", "-q"}},
		{"a flag before a subcommand that has it is the subcommand's", []string{"-qp", "anthropic", "provider", "request", "-p", "openai", "hi"},
			[]string{"provider", "request", "--quiet", "--provider", "anthropic", "--provider", "openai", "hi"}},
		{"a flag before a subcommand that lacks it stays", []string{"--color", "never", "-q", "log"}, []string{"--color", "never", "--quiet", "log"}},
		{"a subcommand's unknown flag stays", []string{"tools", "-a", "x.png"}, []string{"tools", "-a", "x.png"}},
		{"a subcommand's -- stops it", []string{"provider", "request", "--", "-q"}, []string{"provider", "request", "--", "-q"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := reorderFresh(append([]string{"ask"}, tt.args...))
			if want := append([]string{"ask"}, tt.want...); !slices.Equal(got, want) {
				t.Errorf("reorderArgs(%q)\n got %q\nwant %q", tt.args, got, want)
			}
		})
	}
}

// FuzzReorderArgs checks that any command line can be reordered, that what
// comes out reorders to itself (every flag word is long, every prompt word
// after "--"), and that reordering invents no word: each word that is not
// a flag word comes from the input, as often as it was there.
func FuzzReorderArgs(f *testing.F) {
	for _, seed := range []string{
		"-q --quiet hi", "-qy --yes hi", "-qa x.png hi", "-aq x.png hi", "explain grep -qv",
		"hi -y", "-q -- -y hi", "-q provider request -qp openai --quiet hi -q", "tools -a x.png",
		"-qp openai provider request hi", "--timeout", "hi --timeout", "-- -- -q", "log search -q --",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := append([]string{"ask"}, strings.Fields(line)...)
		once := reorderFresh(args)
		if twice := reorderFresh(once); !slices.Equal(twice, once) {
			t.Fatalf("reorderArgs(%q) = %q, which reorders to %q", args, once, twice)
		}
		if len(once) == 0 || once[0] != "ask" {
			t.Fatalf("reorderArgs(%q) = %q: the program's name is gone", args, once)
		}
		given := map[string]int{}
		for _, a := range args {
			given[a]++
		}
		for _, a := range once {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if given[a]--; given[a] < 0 {
				t.Fatalf("reorderArgs(%q) = %q: %q is not a word of the input", args, once, a)
			}
		}
	})
}
