// Command ask lets a language model use tools over several steps and prints
// its answer. See man/ask.1 and README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ask-cli/ask/internal/buildinfo"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/interrupt"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/term"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/trace"
)

// version is set at link time (-ldflags "-X main.version=v1.0.0").
var version = "dev"

// Exit codes of DESIGN §7.
const (
	exitOK          = fault.ExitOK
	exitFailure     = fault.ExitFailure
	exitUsage       = fault.ExitUsage
	exitProvider    = fault.ExitProvider
	exitAuth        = fault.ExitAuth
	exitLimit       = fault.ExitLimit
	exitRefused     = fault.ExitRefused
	exitTimeout     = fault.ExitTimeout
	exitInterrupted = fault.ExitInterrupted
)

// IO is the process's streams and environment, passed down so that tests can
// run the whole CLI in-process.
type IO struct {
	In            io.Reader
	Out, Err      io.Writer
	InTTY, OutTTY bool
	ErrTTY        bool
	// ErrWidth is the width of stderr's terminal, 0 when unknown.
	ErrWidth func() int
	Getenv   func(string) string
	Environ  func() []string
	HTTP     *http.Client
	Now      func() time.Time
	Wd       string
	TTYPath  string // where approvals are read; "" disables prompting
	Net      providers.NetTimeouts
	config   *run.Config         // the config file, read by useConfigFile
	redactor *providers.Redactor // hides the run's secrets in Out and Err
	color    colorChoice
	// sandboxCheck says what the kernel can confine; nil asks it (tests
	// pin an answer).
	sandboxCheck func() sandbox.Support
	paint        term.Palette  // stderr colours, chosen by useConfigFile
	helpDefaults *run.Settings // resolved by helpDefaults on first use
	// typed are the flags the command line gives, by long name (the argv
	// pass reads them).
	typed map[string]bool
	// forHelp builds the flags for help to show: in their categories.
	forHelp bool
}

func main() {
	// A child the sandbox started: it confines itself and becomes the
	// command, before anything of ask's runs.
	sandbox.Main()
	os.Exit(start(os.Args))
}

// start is the process from its arguments to its exit code; the tests'
// `ask` (TestMain) is start too. `ask --version` alone is answered before
// the rest of the start (the signal handlers, the config file, the command
// tree, which is most of the time after the package inits), as git answers
// `git --version`. It prints what the tree prints (TestInitBudget compares
// the two), and a closed stdout is a failed write, not a SIGPIPE, as for
// the tree (interrupt.OnSignals). The signal handlers are not removed: os.Exit
// ends the process.
func start(args []string) int {
	if len(args) == 2 && args[1] == "--version" {
		signal.Ignore(syscall.SIGPIPE)
		if err := printVersion(os.Stdout); errors.Is(err, syscall.EPIPE) {
			return fault.ExitPipe // as the tree does: quiet, the shell's code for SIGPIPE
		}
		return exitOK
	}
	ctx, _ := interrupt.OnSignals(context.Background())
	return runCLI(ctx, args, systemIO())
}

func systemIO() *IO {
	wd, _ := os.Getwd()
	force := os.Getenv("ASK_FORCE_TTY") != ""
	return &IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:    isatty.IsTerminal(os.Stdin.Fd()) || isatty.IsCygwinTerminal(os.Stdin.Fd()),
		OutTTY:   force || isatty.IsTerminal(os.Stdout.Fd()),
		ErrTTY:   force || isatty.IsTerminal(os.Stderr.Fd()),
		ErrWidth: stderrWidth,
		Getenv:   os.Getenv,
		Environ:  os.Environ,
		HTTP:     &http.Client{Transport: providers.NewTransport(providers.DefaultNet)},
		Now:      time.Now,
		Wd:       wd,
		TTYPath:  "/dev/tty",
		Net:      providers.DefaultNet,
	}
}

// runCLI executes the CLI and maps its outcome to an exit code. It is the one
// place where errors become exit codes.
func runCLI(ctx context.Context, args []string, stdio *IO) (code int) {
	out := &interrupt.ClosedWatch{W: stdio.Out}
	stdio.Out = out
	stdio, flush := withRedaction(stdio)
	// Spans go last, once everything is written, within trace.FlushTimeout:
	// a collector that is down costs the exit no more (DESIGN §6).
	defer func() { _ = trace.FlushAtExit() }()
	defer func() {
		flush()
		// A reader that went away (ask log | head -1) is not a fault: the
		// exit is the shell's for SIGPIPE, and nothing is said.
		if out.Closed {
			code = fault.ExitPipe
		}
	}()
	line, err := readArgs(mainSpec(stdio), args[1:])
	// The config file and the colours of stderr come first: the profile is
	// a flag, and even an error in the flags is shown in colour.
	useConfigFile(line, stdio)
	stdio.typed = line.typed()
	if err == nil {
		var argv []string
		if argv, err = commandWords(line, args[0]); err == nil {
			stdio.forHelp = slices.Contains(argv, "--help") || len(argv) == 1
			// urfave/cli is given the command the line names, the one the
			// argv pass built; help lists them all.
			var subs []*cli.Command
			switch {
			case stdio.forHelp:
				subs = subcommands(stdio)
				forHelp(subs)
			case len(line.path) > 1:
				subs = []*cli.Command{line.path[1].cmd}
			}
			err = appWith(stdio, subs).RunContext(ctx, argv)
		}
	}
	if err == nil {
		return exitOK
	}
	code = exitCode(err)
	var silent *silentError
	if !errors.As(err, &silent) && !out.Closed {
		fmt.Fprintf(stdio.Err, "%s %s\n", stdio.paint.ErrorPrefix(), errorLine(err.Error()))
	}
	return code
}

// withRedaction returns stdio with stdout and stderr passing through one
// redactor, to which a run adds its secrets once it knows them (buildRun):
// a key a provider echoes back then shows in no message, answer or JSON.
// flush writes what the redactor held back at the end.
func withRedaction(stdio *IO) (*IO, func()) {
	red := providers.NewRedactor()
	out, errw := red.Writer(stdio.Out), red.Writer(stdio.Err)
	s := *stdio
	s.Out, s.Err, s.redactor = out, errw, red
	return &s, func() {
		out.Flush()
		errw.Flush()
	}
}

// interruptCode is the exit code of a run the error interrupted.
func interruptCode(err error) int { return interrupt.Code(err) }

// withCode gives err the exit code a command chose.
func withCode(code int, err error) error { return &fault.Exit{Code: code, Err: err} }

func usageErr(format string, args ...any) error {
	return withCode(exitUsage, fmt.Errorf(format, args...))
}

// silentError is an exit code whose message was already shown.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func exitCode(err error) int {
	var se *silentError
	var chosen *fault.Exit
	switch {
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &chosen):
		return chosen.Code
	}
	return run.ExitCode(err)
}

// errorLine is an error as the line after "ask:" says it: one line, and a
// message that starts with a command's path ("ask provider send: ...")
// without its "ask ", which the prefix already says.
func errorLine(s string) string {
	// A provider's or a server's words may be in it: escaped, they cannot
	// drive the terminal.
	s = termtext.Safe(termtext.FirstLine(s))
	if rest, ok := strings.CutPrefix(s, "ask "); ok {
		word, _, _ := strings.Cut(rest, " ")
		if commandNames()[strings.TrimSuffix(word, ":")] {
			return rest
		}
	}
	return s
}

// commandNames are the names of ask's commands, whose paths start
// messages.
var commandNames = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, c := range commands {
		names[c.name] = true
	}
	return names
})

// printVersion writes the line `ask --version` prints.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "ask version %s\n", versionString())
	return err
}

// versionString is the version with the commit the binary was built from.
func versionString() string { return buildinfo.Version(version) }

// newApp builds the whole command tree, as --help, completion and the man
// page's tests read it.
func newApp(stdio *IO) *cli.App {
	stdio.forHelp = true
	subs := subcommands(stdio)
	forHelp(subs)
	return appWith(stdio, subs)
}

// commands are ask's commands besides the main one, in --help's order. A
// run builds only the one its line names: the others' flags and help
// would cost every start. It is set in init: the commands print messages
// that name commands.
var commands []command

// command is a subcommand by its name, and what builds it.
type command struct {
	name  string
	build func(*IO) *cli.Command
}

func init() {
	commands = []command{
		{"replay", replayCommand}, {"log", logCommand}, {"undo", undoCommand}, {"config", configCommand},
		{"models", modelsCommand}, {"completion", completionCommand}, {"provider", providerCommand},
		{"tools", toolsCommand}, {"skills", skillsCommand}, {"mcp", mcpCommand}, {"sandbox", sandboxCommand}, {"batch", batchCommand},
		{"resume", resumeCommand}, {"worktree", worktreeCommand}, {"acp", acpCommand},
	}
}

// buildCommand builds the command that build makes, with its usage errors.
func buildCommand(stdio *IO, build func(*IO) *cli.Command) *cli.Command {
	c := build(stdio)
	setUsageError(c, "ask "+c.Name)
	return c
}

// subcommands builds all of ask's commands besides the main one, in
// --help's order.
func subcommands(stdio *IO) []*cli.Command {
	out := make([]*cli.Command, len(commands))
	for i, c := range commands {
		out[i] = buildCommand(stdio, c.build)
	}
	return out
}

// forHelp adds to the commands what only their help shows: the main
// command's flags each reads, and examples. A run shows no help, and does
// without.
func forHelp(subs []*cli.Command) {
	for _, c := range subs {
		addRunFlagsNotes(c, "ask")
		addCommandExamples(c, "ask")
	}
}

// appWith builds the app with the main command's flags and action, and the
// subcommands subs.
func appWith(stdio *IO, subs []*cli.Command) *cli.App {
	app := &cli.App{
		Name:            "ask",
		Usage:           "let a language model use tools, then answer",
		UsageText:       "ask [flags] [PROMPT...]\n   command | ask [flags] [PROMPT...]\n   ask replay [FILE]",
		Version:         versionString(),
		Reader:          stdio.In,
		Writer:          stdio.Out,
		ErrWriter:       stdio.Err,
		HideHelpCommand: true,
		Flags:           runFlags(stdio),
		Commands:        subs,
		Action:          func(c *cli.Context) error { return runAction(c, stdio) },
		ExitErrHandler:  func(*cli.Context, error) {},
	}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return flagError(err, app.Flags, "ask")
	}
	if stdio.forHelp {
		app.Description = withExamples(app.Description, examples()[app.Name])
	}
	return app
}

// setUsageError makes a flag error name the whole command whose help
// explains it: "see ask provider format-tools --help".
func setUsageError(c *cli.Command, path string) {
	// urfave/cli appends its one shared help command to every command that
	// does not hide it, and writes to it on every run: runs in one process
	// (the tests) would race on it. --help covers what it does.
	c.HideHelpCommand = true
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return flagError(err, c.Flags, path)
	}
	for _, sub := range c.Subcommands {
		setUsageError(sub, path+" "+sub.Name)
	}
}
