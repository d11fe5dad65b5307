package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/term"
)

func init() {
	// -v is --verbose; urfave/cli would take it for --version.
	cli.VersionFlag = newSharedFlag(&cli.BoolFlag{Name: "version", Usage: "print the version and commit"})
	cli.HelpFlag = newSharedFlag(cli.HelpFlag.(*cli.BoolFlag))
	// The one way the version is printed, with the tree or without (main).
	cli.VersionPrinter = func(c *cli.Context) { printVersion(c.App.Writer) }
}

// sharedFlag is one of urfave/cli's flags that every app and command
// shares (--help, --version). urfave/cli writes to a flag as it applies
// it; applying a copy keeps the shared one untouched, so that apps may run
// side by side in one process, as the tests run them.
// Its names are stored, as those of the flags of a run (flagnames.go);
// it is a pointer, since urfave/cli compares flags.
type sharedFlag struct {
	*cli.BoolFlag
	names []string
}

func newSharedFlag(f *cli.BoolFlag) *sharedFlag {
	return &sharedFlag{f, append([]string{f.Name}, f.Aliases...)}
}

func (f *sharedFlag) Names() []string { return f.names }

func (f *sharedFlag) Apply(set *flag.FlagSet) error {
	c := *f.BoolFlag
	return c.Apply(set)
}

func retriesFlag(value int) cli.Flag {
	r, _ := settings.Lookup("retries")
	return &cli.IntFlag{Name: r.Name, Value: value, Usage: r.Help}
}

// checkQuietVerbose refuses -q with -v: one silences stderr, the other
// asks it to say more, and neither can win without surprise.
func checkQuietVerbose(c *cli.Context) error {
	if c.Bool("quiet") && c.Bool("verbose") {
		return usageErr("-q (--quiet) and -v (--verbose) ask for opposite things: choose one")
	}
	return nil
}

func runAction(c *cli.Context, stdio *IO) error {
	if c.Bool("json") && c.Bool("events") {
		return usageErr("--json and --events both write to stdout: choose one")
	}
	if err := checkQuietVerbose(c); err != nil {
		return err
	}
	quiet := c.Bool("quiet")
	status := statusFor(stdio, quiet)
	r, prompt, err := prepareRun(c, stdio, status, false)
	if err != nil {
		return err
	}
	defer r.Close()
	return execute(c.Context, r, prompt, stdio, status, presentation{
		jsonOut: c.Bool("json"), events: c.Bool("events"), transcript: c.String("transcript"),
		quiet: quiet, verbose: c.Bool("verbose"), keep: true,
	})
}

// prepareRun reads the prompt (or the --plan goal), resolves the settings
// and builds the run the main command's flags describe; offline builds it
// for `ask provider request` and `ask tools`, which send nothing. On a
// terminal the run asks its approvals there, holding status off the line.
func prepareRun(c *cli.Context, stdio *IO, status *term.StatusLine, offline bool) (*run.Run, string, error) {
	// The settings first: `ask -p "what is this"` is an unknown provider
	// (-p is not the prompt, as it is for some other tools) before it is a
	// run without a prompt.
	s, err := resolve(c, stdio)
	if err != nil {
		return nil, "", err
	}
	// --timeout bounds the whole invocation from here: reading stdin,
	// starting the MCP servers, every request and every tool.
	ctx, cancel := loop.WithTimeout(c.Context, s.Timeout.Value)
	c.Context = ctx
	stopped := func(while string, err error) error {
		if context.Cause(ctx) == loop.ErrTimeout {
			return withCode(exitTimeout, fmt.Errorf("--timeout %s reached while %s", s.Timeout.Value, while))
		}
		return err
	}
	prompt, err := readPrompt(c, stdio)
	if err != nil && !c.IsSet("plan") {
		cancel()
		return nil, "", stopped("reading stdin", err)
	}
	if c.IsSet("plan") {
		if prompt, err = run.PlanPrompt(c.String("plan"), s.Mode.Value, stdio.Wd, prompt); err != nil {
			cancel()
			return nil, "", err
		}
	}
	r, err := buildRun(c, stdio, status, s, func(env *run.Env) { env.Offline = offline })
	if err != nil {
		cancel()
		return nil, "", stopped("starting the run (its MCP servers)", err)
	}
	r.OnClose(cancel)
	return r, prompt, nil
}

// buildRun builds the run of settings s for command c. On a terminal the
// run asks its approvals there, holding the status line off it meanwhile.
func buildRun(c *cli.Context, stdio *IO, status *term.StatusLine, s run.Settings, adjust func(*run.Env)) (*run.Run, error) {
	env := runEnv(c, stdio, status)
	env.Private = []string{c.String("transcript")}
	if adjust != nil {
		adjust(&env)
	}
	// A person is asked whenever the controlling terminal can be opened,
	// wherever stdin, stdout and stderr go (2>err.log included); never
	// otherwise.
	closeTTY := func() {}
	if t, closeIt := term.OpenTerminal(stdio.TTYPath); t != nil {
		t.Out = stdio.paint.Approvals(t.Out)
		env.Prompter, closeTTY = term.HoldWhileAsking(status, t), closeIt
		env.Confirm = func(ctx context.Context, question string) bool {
			yes, _ := t.Confirm(ctx, question)
			return yes
		}
	}
	r, err := run.New(c.Context, s, env)
	if err != nil {
		closeTTY()
		return nil, err
	}
	stdio.redactor.Add(r.Secrets()...)
	r.OnClose(closeTTY)
	return r, nil
}

// offlineRun is the run the flags of c describe, built to send nothing:
// its tools and policy for `ask tools`, its declared tools for a stage.
func offlineRun(c *cli.Context, stdio *IO) (*run.Run, error) {
	s, err := resolve(c, stdio)
	if err != nil {
		return nil, err
	}
	return buildRun(c, stdio, statusFor(stdio, c.Bool("quiet")), s, func(env *run.Env) { env.Offline = true })
}

// runEnv is the world a run of command c is built in.
func runEnv(c *cli.Context, stdio *IO, status *term.StatusLine) run.Env {
	quiet := c.Bool("quiet")
	env := run.Env{
		Getenv: stdio.Getenv, Environ: stdio.Environ, HTTP: stdio.HTTP, Now: stdio.Now, Wd: stdio.Wd,
		Version: version, IdleTimeout: stdio.Net.StreamIdle, Verbose: c.Bool("verbose") && !quiet,
		SandboxCheck: stdio.sandboxCheck,
	}
	if !quiet {
		env.Notes = status.Above(stdio.Err)
	}
	return env
}

// readPrompt joins the arguments and, when stdin is not a terminal and
// --no-stdin is not given, appends what it holds as context, up to
// --max-stdin bytes. "-" alone means the prompt is stdin. A pipe is read to
// its end: what comes through it may be the context (`sleep 8 | ask hi`
// waits the 8 seconds). A file another program has read part of (the list
// of `while read f; do ask "review $f"; done < files.txt`) is left alone,
// so that the loop goes on.
func readPrompt(c *cli.Context, stdio *IO) (string, error) {
	args := c.Args().Slice()
	fromStdin := len(args) == 1 && args[0] == "-"
	if fromStdin {
		args = nil
	}
	if fromStdin && c.Bool("no-stdin") {
		return "", usageErr("the prompt - means stdin, which --no-stdin says never to read")
	}
	prompt := strings.TrimSpace(strings.Join(args, " "))
	var input string
	verbose := c.Bool("verbose") && !c.Bool("quiet")
	readIt := !stdio.InTTY && stdio.In != nil && !c.Bool("no-stdin")
	if readIt && !fromStdin && sharedFile(stdio.In) {
		readIt = false
		if verbose {
			fmt.Fprintln(stdio.Err, "ask: stdin: not read: it is a file another program has read part of (a while-read loop's list)")
		}
	}
	if readIt {
		limit, err := stdinLimit(c)
		if err != nil {
			return "", err
		}
		b, err := readAll(c.Context, io.LimitReader(stdio.In, limit+1))
		if err != nil && errors.Is(err, loop.ErrTimeout) {
			return "", err
		}
		if err != nil {
			return "", usageErr("read stdin: %v", err)
		}
		if int64(len(b)) > limit {
			return "", usageErr("stdin holds more than %s, the cap on piped context; give --max-stdin with a larger size (such as 8M), or less input", bytesize.Format(limit))
		}
		input = strings.TrimSpace(string(b))
		if verbose && len(b) > 0 {
			fmt.Fprintf(stdio.Err, "ask: stdin: %s read (cap %s)\n", bytesize.Format(int64(len(b))), bytesize.Format(limit))
		}
	}
	switch {
	case fromStdin || prompt == "":
		prompt = input
	case input != "":
		prompt += "\n\n<stdin>\n" + input + "\n</stdin>"
	}
	if prompt == "" {
		return "", usageErr("no prompt: give it as arguments (ask \"why does make fail?\") or on stdin")
	}
	return prompt, nil
}

// stdinLimit is --max-stdin in bytes. Its default, 1M, is about a quarter
// of a million tokens, more than most models take.
func stdinLimit(c *cli.Context) (int64, error) {
	v := cmp.Or(c.String("max-stdin"), settings.DefaultMaxStdin)
	n, err := bytesize.Parse(v)
	if err != nil {
		return 0, usageErr("--max-stdin %q: %v; give a size such as 512K, 4M or 1G", v, err)
	}
	return n, nil
}

// readAll reads r to its end, or until ctx is done: a pipe that stays
// open must not hold the run past --timeout. The read goes on after, and
// ends with the process.
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

// presentation is how a run's outcome is shown: which of stdout's forms,
// where the transcript goes, how much stderr says.
type presentation struct {
	jsonOut, events, quiet, verbose bool
	transcript                      string
	// keep keeps the run for a later --continue.
	keep bool
	// sink, when set, receives every event too (replay --check uses it).
	sink io.Writer
}

// finalJSON is what --json prints.
type finalJSON struct {
	// ID is the run's: ask log show ID, ask replay ID, ask --resume ID.
	ID     string `json:"id"`
	Status string `json:"status"`
	Answer string `json:"answer"`
	// Value is the answer parsed, for a run with --schema whose answer
	// validated, so that scripts need no fromjson.
	Value     json.RawMessage `json:"value,omitempty"`
	Provider  string          `json:"provider"`
	Model     string          `json:"model"`
	Steps     int             `json:"steps"`
	ToolCalls []loop.Call     `json:"tool_calls"`
	Usage     providers.Usage `json:"usage"`
	// UsagePerStep is each model request's usage, in step order.
	UsagePerStep []records.StepUsage `json:"usage_per_step"`
	Denials      []records.Denial    `json:"denials"`
	// Changes are the files the run changed, in order.
	Changes    []records.Change `json:"changes"`
	Error      string           `json:"error,omitempty"`
	ExitCode   int              `json:"exit_code"`
	DurationMS int64            `json:"duration_ms"`
	// Cost is the run's cost as the provider reported it, when it did.
	Cost *float64 `json:"cost,omitempty"`
}

// execute runs r and shows what came of it: the answer (or --json, or the
// events) on stdout, progress and the fault on stderr.
func execute(ctx context.Context, r *run.Run, prompt string, stdio *IO, status *term.StatusLine, p presentation) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	stdout := pipeWatch{w: stdio.Out, stop: stop} // what the run writes as it goes
	out := run.Output{
		Observe:    func(ev records.Event) { note(stdio, status, p, ev) },
		OnProgress: status.Progress,
	}
	if p.transcript != "" {
		f, err := records.Create(p.transcript)
		if err != nil {
			return usageErr("--transcript: %v", err)
		}
		defer f.Close()
		out.Sinks = append(out.Sinks, f)
	}
	if p.events {
		out.Sinks = append(out.Sinks, stdout)
	}
	if p.sink != nil {
		out.Sinks = append(out.Sinks, p.sink)
	}
	if p.keep {
		store, err := history.Open(stdio.Getenv)
		if err != nil {
			return usageErr("%v", err)
		}
		out.History = &store
	}
	// An answer to a --schema is printed once validated.
	var answer *term.Answer
	if stdio.OutTTY && !p.jsonOut && !p.events && !r.HasSchema() {
		answer = term.NewAnswer(stdout, status)
		out.Observe = func(ev records.Event) {
			if ev.Type == records.TypeRequest {
				answer.Step(ev.Step)
			}
			note(stdio, status, p, ev)
		}
		out.OnText = answer.Text
	}
	res := r.Execute(ctx, prompt, out)
	status.Clear()

	code, msg := res.ExitCode, res.Why
	var writeErr error
	switch {
	case p.jsonOut:
		j := finalJSON{ID: res.ID, Status: res.Status, Answer: res.Answer, DurationMS: res.Duration.Milliseconds(), Cost: res.Usage.Cost, Provider: r.Provider.Name, Model: r.ModelName, Steps: res.Steps,
			ToolCalls: nonNil(res.Calls), Usage: res.Usage, UsagePerStep: nonNil(res.UsagePerStep), Denials: nonNil(res.Denials),
			Changes: nonNil(res.Changes), ExitCode: code}
		if r.HasSchema() && res.Status == loop.StatusCompleted && json.Valid([]byte(res.Answer)) {
			j.Value = json.RawMessage(res.Answer)
		}
		if res.Err != nil {
			j.Error = res.Err.Error()
		}
		writeErr = writeJSON(stdio.Out, j, stdio.OutTTY)
	case p.events:
		// run.finished carries the answer.
	case answer != nil && answer.Streamed():
		if !strings.HasSuffix(res.Answer, "\n") {
			_, writeErr = io.WriteString(stdio.Out, "\n")
		}
	case res.Status == loop.StatusSchemaFailed:
		// An answer that does not match --schema is not data; --json shows it.
	case res.Answer != "":
		_, writeErr = io.WriteString(stdio.Out, strings.TrimRight(res.Answer, "\n")+"\n")
	}
	// A person at the terminal sees what the run took; a script reads it
	// from --json.
	if stdio.ErrTTY && !p.quiet && res.Steps > 0 {
		fmt.Fprintf(stdio.Err, "ask: %s\n", stdio.paint.Dim(term.RunSummary(res.Steps, res.Usage)))
	}
	if code == exitOK {
		switch {
		case writeErr != nil:
			return withCode(exitFailure, fmt.Errorf("write the answer: %w", writeErr))
		case res.WriteErr != nil:
			return withCode(exitFailure, fmt.Errorf("write events: %w", res.WriteErr))
		}
		return nil
	}
	if msg != "" {
		fmt.Fprintf(stdio.Err, "%s %s\n", stdio.paint.ErrorPrefix(), errorLine(msg))
	}
	return &silentError{code: code}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// note shows an event on stderr: retries always (unless --quiet), every
// request and tool call with --verbose.
func note(stdio *IO, status *term.StatusLine, p presentation, ev records.Event) {
	if p.quiet {
		return
	}
	if line := term.NoteLine(ev, p.verbose); line != "" {
		status.Clear()
		fmt.Fprintf(stdio.Err, "ask: %s\n", line)
	}
}

// writeJSON prints v as indented JSON on a terminal and compact JSON in a
// pipe, without HTML escaping.
func writeJSON(w io.Writer, v any, pretty bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}
