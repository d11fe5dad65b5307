package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/interrupt"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/term"
	"github.com/ask-cli/ask/internal/termtext"
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
// Its names are stored, as those of the flags of a run (namedFlag);
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
	prompter, confirm, closeTTY := term.Approvals(stdio.TTYPath, status, stdio.paint)
	if prompter != nil {
		env.Prompter, env.Confirm, env.Ask = prompter, confirm, term.Input(prompter)
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
		Version: versionString(), IdleTimeout: stdio.Net.StreamIdle, Verbose: c.Bool("verbose") && !quiet,
		SandboxCheck: stdio.sandboxCheck,
	}
	if !quiet {
		env.Notes = status.Above(stdio.Err)
		env.MCPStarting = status.MCPStarting
	}
	return env
}

// readPrompt is the prompt of the arguments and stdin (prompts.User).
func readPrompt(c *cli.Context, stdio *IO) (string, error) {
	v := cmp.Or(c.String("max-stdin"), settings.DefaultMaxStdin)
	limit, err := bytesize.Parse(v)
	if err != nil {
		return "", usageErr("--max-stdin %q: %v; give a size such as 512K, 4M or 1G", v, err)
	}
	in := prompts.UserInput{Args: c.Args().Slice(), Stdin: stdio.In, StdinIsTerminal: stdio.InTTY,
		NoStdin: c.Bool("no-stdin"), MaxStdin: limit}
	if c.Bool("verbose") && !c.Bool("quiet") {
		in.Notes = stdio.Err
	}
	return prompts.User(c.Context, in)
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

// execute runs r and shows what came of it: the answer (or --json, or the
// events) on stdout, progress and the fault on stderr.
func execute(ctx context.Context, r *run.Run, prompt string, stdio *IO, status *term.StatusLine, p presentation) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	stdout := interrupt.PipeWatch{W: stdio.Out, Stop: stop} // what the run writes as it goes
	calls := term.NewCalls()
	out := run.Output{
		Observe:    func(ev records.Event) { note(stdio, status, p, calls, ev) },
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
	// On a terminal every step's text streams as it comes; into a pipe only
	// where no step can turn out to be narration before tool calls: a run
	// that offers no tools. Elsewhere a pipe gets the answer alone.
	if (stdio.OutTTY || len(r.Declared) == 0) && !p.jsonOut && !p.events && !r.HasSchema() {
		var shown io.Writer = stdout
		if stdio.OutTTY {
			// On a terminal the model's text cannot drive it; a pipe gets
			// the bytes as they are.
			screen := &termtext.Writer{W: stdout}
			defer screen.Flush()
			shown = screen
		}
		answer = term.NewAnswer(shown, status)
		out.Observe = func(ev records.Event) {
			if ev.Type == records.TypeRequest {
				answer.Step(ev.Step)
			}
			note(stdio, status, p, calls, ev)
		}
		out.OnText = answer.Text
	}
	res := r.Execute(ctx, prompt, out)
	status.Clear()

	code, msg := res.ExitCode, res.Why
	if res.Status == loop.StatusDeferred {
		msg += ": " + deferredHint(res.ID)
	}
	var writeErr error
	switch {
	case p.jsonOut:
		writeErr = writeJSON(stdio.Out, r.Summary(res), stdio.OutTTY)
	case p.events:
		// run.finished carries the answer.
	case answer != nil && answer.Streamed():
		// A note below the answer (a check's line) has ended its line.
		if !strings.HasSuffix(res.Answer, "\n") && !status.EndedLine() {
			_, writeErr = io.WriteString(stdio.Out, "\n")
		}
	case res.Status == loop.StatusSchemaFailed:
		// An answer that does not match --schema is not data; --json shows it.
	case res.Answer != "":
		text := strings.TrimRight(res.Answer, "\n") + "\n"
		if stdio.OutTTY {
			text = termtext.SafeLines(text)
		}
		_, writeErr = io.WriteString(stdio.Out, text)
	}
	if w := res.Worktree; w != nil && !p.quiet {
		fmt.Fprintf(stdio.Err, "ask: kept the worktree %s, branch %s (ask worktree rm removes it)\n", termtext.Safe(w.Path), termtext.Safe(w.Branch))
	}
	// A person at the terminal sees what the run took; a script reads it
	// from --json.
	if stdio.ErrTTY && !p.quiet && res.Steps > 0 {
		fmt.Fprintf(stdio.Err, "ask: %s\n", stdio.paint.Dim(r.Provider.Name+" "+termtext.Safe(r.ModelName)+" · "+term.RunSummary(res.Steps, res.Usage)))
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
	// A reader that went away (ask --events | head -1) is no fault to
	// report: 141 is the shell's own code for it, said by nobody.
	if msg != "" && code != fault.ExitPipe {
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
// request and tool call with --verbose; on a terminal each finished call
// leaves a line, so the work stays on the screen once the status line
// moves on.
func note(stdio *IO, status *term.StatusLine, p presentation, calls *term.Calls, ev records.Event) {
	if p.quiet {
		return
	}
	if line := term.NoteLine(ev, p.verbose); line != "" {
		status.Clear()
		fmt.Fprintf(stdio.Err, "ask: %s\n", line)
	}
	if !stdio.ErrTTY {
		return
	}
	if line, failed := calls.Line(ev, errWidth(stdio)); line != "" {
		status.Clear()
		if failed {
			line = stdio.paint.Failed(line)
		} else {
			line = stdio.paint.Dim(line)
		}
		fmt.Fprintln(stdio.Err, line)
	}
}

// writeJSON prints v as indented JSON on a terminal and compact JSON in a
// pipe, without HTML escaping.
func writeJSON(w io.Writer, v any, pretty bool) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := b.Bytes()
	if pretty {
		out = termtext.JSON(out) // a terminal: the model's text cannot drive it
	}
	_, err := w.Write(out)
	return err
}
