package prompts

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fault"
)

func TestUser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   UserInput
		want string
		err  string
	}{
		{"words", UserInput{Args: []string{"why", "does", "it", "fail?"}}, "why does it fail?", ""},
		{"stdin is context", UserInput{Args: []string{"review"}, Stdin: strings.NewReader("diff\n")}, "review\n\n<stdin>\ndiff\n</stdin>", ""},
		{"- is the prompt", UserInput{Args: []string{"-"}, Stdin: strings.NewReader(" hello \n")}, "hello", ""},
		{"- reads a terminal too", UserInput{Args: []string{"-"}, Stdin: strings.NewReader("typed\n"), StdinIsTerminal: true}, "typed", ""},
		{"a terminal is not context", UserInput{Args: []string{"hi"}, Stdin: strings.NewReader("x"), StdinIsTerminal: true}, "hi", ""},
		{"--no-stdin", UserInput{Args: []string{"hi"}, Stdin: strings.NewReader("x"), NoStdin: true}, "hi", ""},
		{"stdin alone", UserInput{Stdin: strings.NewReader("just this")}, "just this", ""},
		{"- with --no-stdin", UserInput{Args: []string{"-"}, NoStdin: true}, "", "--no-stdin says never to read"},
		{"over the cap", UserInput{Args: []string{"hi"}, Stdin: strings.NewReader("12345"), MaxStdin: 4}, "", "stdin holds more than 4 bytes"},
		{"nothing", UserInput{Stdin: strings.NewReader("  \n")}, "", "no prompt"},
	}
	for _, tt := range tests {
		if tt.in.MaxStdin == 0 {
			tt.in.MaxStdin = 1 << 20
		}
		got, err := User(context.Background(), tt.in)
		if tt.err != "" {
			if kind, _ := fault.KindOf(err); err == nil || !strings.Contains(err.Error(), tt.err) || kind != fault.Usage {
				t.Errorf("%s: %v, want a usage error with %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// A pipe that stays open does not hold the prompt past the context.
func TestUserStopsWithTheContext(t *testing.T) {
	t.Parallel()
	open, w := io.Pipe()
	defer w.Close()
	stop := errors.New("stopped")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	if _, err := User(ctx, UserInput{Args: []string{"hi"}, Stdin: open, MaxStdin: 10}); !errors.Is(err, stop) {
		t.Errorf("err %v, want the context's cause", err)
	}
}

// Only what ends without waiting on anyone is read without a way to give
// up: a file and /dev/null. A pipe, which may stay open, is not.
func TestCannotBlock(t *testing.T) {
	t.Parallel()
	file, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name string
		in   io.Reader
		want bool
	}{
		{"a file", file, true},
		{"/dev/null", null, true},
		{"a pipe", r, false},
		{"a reader", strings.NewReader("x"), false},
	} {
		if got := cannotBlock(tc.in); got != tc.want {
			t.Errorf("%s: cannotBlock = %v, want %v", tc.name, got, tc.want)
		}
	}
}
