package prompts

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/fault"
)

// UserInput is where a run's prompt comes from (DESIGN §4).
type UserInput struct {
	// Args are the prompt's words; "-" alone means the prompt is stdin.
	Args            []string
	Stdin           io.Reader
	StdinIsTerminal bool
	// NoStdin never reads stdin (--no-stdin).
	NoStdin bool
	// MaxStdin is the most piped context read (--max-stdin); more is an
	// error, not a cut.
	MaxStdin int64
	// Notes, when set, is told what was read (-v).
	Notes io.Writer
}

// User is the prompt: the arguments joined, and, when stdin is not a
// terminal and NoStdin is not set, what it holds appended as context. "-"
// alone means the prompt is stdin, read even from a terminal until Ctrl-D.
// A pipe is read to its end, or until ctx is done (--timeout bounds the
// whole invocation): what comes through it may be the context. A file
// another program has read part of (the list of `while read f; do ask
// "review $f"; done < files.txt`) is left alone, so that the loop goes on.
// Bad input is a fault.Usage error.
func User(ctx context.Context, in UserInput) (string, error) {
	args := in.Args
	fromStdin := len(args) == 1 && args[0] == "-"
	if fromStdin {
		args = nil
	}
	if fromStdin && in.NoStdin {
		return "", fault.Usagef("the prompt - means stdin, which --no-stdin says never to read")
	}
	prompt := strings.TrimSpace(strings.Join(args, " "))
	var input string
	readIt := (!in.StdinIsTerminal || fromStdin) && in.Stdin != nil && !in.NoStdin
	if readIt && !fromStdin && sharedFile(in.Stdin) {
		readIt = false
		if in.Notes != nil {
			fmt.Fprintln(in.Notes, "ask: stdin: not read: it is a file another program has read part of (a while-read loop's list)")
		}
	}
	if readIt {
		read := readAll
		if cannotBlock(in.Stdin) {
			read = func(_ context.Context, r io.Reader) ([]byte, error) { return io.ReadAll(r) }
		}
		b, err := read(ctx, io.LimitReader(in.Stdin, in.MaxStdin+1))
		switch {
		case ctx.Err() != nil:
			return "", err
		case err != nil:
			return "", fault.Usagef("read stdin: %v", err)
		case int64(len(b)) > in.MaxStdin:
			return "", fault.Usagef("stdin holds more than %s, the cap on piped context; give --max-stdin with a larger size (such as 8M), or less input", bytesize.Format(in.MaxStdin))
		}
		input = strings.TrimSpace(string(b))
		if in.Notes != nil && len(b) > 0 {
			fmt.Fprintf(in.Notes, "ask: stdin: %s read (cap %s)\n", bytesize.Format(int64(len(b))), bytesize.Format(in.MaxStdin))
		}
	}
	switch {
	case fromStdin || prompt == "":
		prompt = input
	case input != "":
		prompt += "\n\n<stdin>\n" + input + "\n</stdin>"
	}
	if prompt == "" {
		return "", fault.Usagef("no prompt: give it as arguments (ask \"why does make fail?\") or on stdin")
	}
	return prompt, nil
}

// readAll reads r to its end, or until ctx is done: a pipe that stays
// open must not hold the run. The read goes on after, and ends with the
// process.
func readAll(ctx context.Context, r io.Reader) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() {
		b, err := io.ReadAll(r)
		done <- read{b, err}
	}()
	select {
	case got := <-done:
		return got.b, got.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// cannotBlock reports whether reading in to its end waits on no one: a
// regular file, or /dev/null, which a script's stdin often is. Those are
// read at once; a pipe or a terminal on a goroutine that ctx can give up
// on (readAll).
func cannotBlock(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil {
		return false
	}
	if info.Mode().IsRegular() {
		return true
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(info, null)
}

// sharedFile reports whether in is a regular file read part-way already:
// another program (a shell's `while read` loop) is going through it, and
// what follows is its, not this run's context.
func sharedFile(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	return err == nil && off > 0
}
