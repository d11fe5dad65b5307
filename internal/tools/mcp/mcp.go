// Package mcp makes the tools of MCP servers callable by the model: each
// --mcp command is started once per run over stdio with the official Go SDK,
// its tools are listed (every page) and declared as SERVER__TOOL, calls are
// passed through, and every server is stopped when the run ends or its
// context is cancelled.
//
// Choices, after ../shared/MCP-NOTES.md:
//   - protocol 2025-11-25 is asked for directly (no server/discover probe,
//     which the reference servers answer with "method not found");
//   - the client advertises no capabilities, so servers send no roots/list
//     request (filesystem would swap its directories for our roots, and
//     everything can hang on exit while that request is unanswered);
//   - the tool list is read once: tools/list_changed is ignored, since the
//     model is told the tools once, when the run starts;
//   - each server runs in its own process group, so that stopping it stops
//     what it started too (npx starts node, node may start more).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/tools"
)

const (
	protocolVersion = "2025-11-25"
	// DefaultStartTimeout bounds start, handshake and listing of one server;
	// Node servers take about a second, npx downloads more.
	DefaultStartTimeout = 60 * time.Second
	// terminateAfter is how long a server may take to exit once its stdin is
	// closed, before SIGTERM.
	terminateAfter = 2 * time.Second
	// pipeWait bounds the wait for a server's stderr once it has exited.
	pipeWait = time.Second
)

// Options say how servers are started.
type Options struct {
	Dir string   // working directory of the servers
	Env []string // their environment, already without credentials (tools.ChildEnv)
	// Stderr, when set, receives the servers' stderr lines, each prefixed
	// with "mcp SERVER: ". The last lines are always kept for error messages.
	Stderr io.Writer
	// StartTimeout bounds each server's start; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// Reserved are names already taken by other tools.
	Reserved []string
	Version  string // reported to servers as the client version
	// Sandbox, when set, confines the servers (--sandbox-mcp): their
	// processes are started inside it.
	Sandbox *sandbox.Sandbox
}

// Servers are the running servers of one run.
type Servers struct {
	servers []*server
	tools   []tools.Tool
	once    sync.Once
}

type server struct {
	name      string // the prefix of its tools' names
	command   string // as given to --mcp
	cmd       *exec.Cmd
	session   *sdk.ClientSession
	stderr    *tailWriter
	pgid      atomic.Int64 // the server's process group, once started
	sandboxed bool         // confined by a working sandbox
	stopWatch func() bool  // stops the context watch
}

// Start starts every command, concurrently, and lists their tools. The
// servers live until Close or until ctx is cancelled. If any server fails,
// the others are stopped and the error names the failing command.
func Start(ctx context.Context, commands []string, opts Options) (*Servers, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	type plan struct {
		env, argv []string
		name      string
	}
	names := newNamer(opts.Reserved...)
	plans := make([]plan, len(commands))
	for i, c := range commands {
		env, argv, err := splitCommand(c)
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: %v", c, err)
		}
		plans[i] = plan{env: env, argv: argv, name: names.server(serverBaseName(argv))}
	}

	s := &Servers{servers: make([]*server, len(commands))}
	errs := make([]error, len(commands))
	listed := make([][]*sdk.Tool, len(commands))
	var wg sync.WaitGroup
	for i, p := range plans {
		wg.Go(func() {
			s.servers[i], listed[i], errs[i] = startServer(ctx, commands[i], p.name, p.env, p.argv, opts)
		})
	}
	wg.Wait()
	for _, err := range errs { // the first failure, in flag order
		if err != nil {
			s.Close()
			return nil, err
		}
	}
	for i, srv := range s.servers {
		for _, t := range listed[i] {
			s.tools = append(s.tools, newRemoteTool(srv, names.tool(srv.name, t.Name), t))
		}
	}
	return s, nil
}

// Tools returns the servers' tools, server by server in flag order, each
// server's in the order it listed them.
func (s *Servers) Tools() []tools.Tool { return s.tools }

// Close stops every server, concurrently: stdin is closed, a server that
// does not exit within 2 s gets SIGTERM, then SIGKILL, and its whole
// process group is killed last. Close may be called more than once.
func (s *Servers) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		var wg sync.WaitGroup
		for _, srv := range s.servers {
			if srv != nil {
				wg.Go(srv.stop)
			}
		}
		wg.Wait()
	})
}

func startServer(ctx context.Context, command, name string, env, argv []string, opts Options) (*server, []*sdk.Tool, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("MCP server %q: %s", command, fmt.Sprintf(format, args...))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if errors.Is(cmd.Err, exec.ErrNotFound) || errors.Is(cmd.Err, exec.ErrDot) {
		return nil, nil, fail("cannot start %s: %v", argv[0], cmd.Err)
	}
	cmd.Dir = opts.Dir
	cmd.Env = append(append([]string(nil), opts.Env...), env...)
	srv := &server{name: name, command: command, cmd: cmd, stderr: newTailWriter(name, opts.Stderr)}
	cmd.Stderr = srv.stderr
	cmd.WaitDelay = pipeWait
	// Its own group: the terminal's Ctrl-C reaches ask only, which stops
	// the servers itself, and the group is what is killed at the end.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	job, err := opts.Sandbox.Confine(cmd)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	srv.sandboxed = opts.Sandbox.Active()

	startCtx, cancel := context.WithTimeoutCause(ctx, opts.StartTimeout,
		fmt.Errorf("no answer within %s", opts.StartTimeout))
	defer cancel()
	// A server that hangs, or a Ctrl-C, ends the start at once rather than
	// after the SDK's polite shutdown.
	stopKill := context.AfterFunc(startCtx, srv.killGroup)
	defer stopKill()
	client := sdk.NewClient(&sdk.Implementation{Name: "ask", Version: opts.Version},
		&sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	transport := &groupTransport{CommandTransport: sdk.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}, srv: srv}
	session, err := client.Connect(startCtx, transport, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		srv.killGroup()
	}
	// The child has executed the server, or exited: this does not wait.
	if refused := job.Err(); refused != nil {
		if session != nil {
			session.Close()
		}
		return nil, nil, fail("%v", refused)
	}
	if err != nil {
		switch {
		case srv.groupID() == 0:
			return nil, nil, fail("cannot start %s: %v", argv[0], err)
		case ctx.Err() != nil:
			return nil, nil, fmt.Errorf("MCP server %q: %w", command, context.Cause(ctx))
		case startCtx.Err() != nil:
			return nil, nil, fail("it started but did not answer the MCP handshake within %s%s", opts.StartTimeout, srv.stderrNote())
		}
		return nil, nil, fail("the MCP handshake failed: %v%s", exitNote(cmd, err), srv.stderrNote())
	}
	srv.session = session
	srv.stopWatch = context.AfterFunc(ctx, srv.killGroup) // Ctrl-C, or the run's end

	var listed []*sdk.Tool
	for t, err := range session.Tools(startCtx, nil) {
		if err != nil {
			srv.stop()
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("MCP server %q: %w", command, context.Cause(ctx))
			}
			return nil, nil, fail("listing its tools failed: %v%s", err, srv.stderrNote())
		}
		listed = append(listed, t)
	}
	if !stopKill() { // the start timed out just now and the server is gone
		srv.stop()
		return nil, nil, fail("it did not list its tools within %s", opts.StartTimeout)
	}
	return srv, listed, nil
}

// exitNote says how the server ended when it died during the handshake.
func exitNote(cmd *exec.Cmd, err error) string {
	if cmd.ProcessState != nil {
		return fmt.Sprintf("it exited (%s) before answering", cmd.ProcessState)
	}
	return err.Error()
}

func (s *server) stop() {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	if s.session != nil {
		// Closes stdin, waits, then SIGTERM and SIGKILL; a server that ends
		// on a signal is not an error worth reporting.
		_ = s.session.Close()
	}
	s.killGroup()
}

// groupTransport records the server's process group once it has started,
// for killGroup, which may run in another goroutine.
type groupTransport struct {
	sdk.CommandTransport
	srv *server
}

func (t *groupTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.CommandTransport.Connect(ctx)
	if p := t.Command.Process; p != nil {
		t.srv.pgid.Store(int64(p.Pid))
	}
	return conn, err
}

func (s *server) groupID() int { return int(s.pgid.Load()) }

// killGroup kills whatever is left of the server's process group.
func (s *server) killGroup() {
	if pgid := s.groupID(); pgid > 0 {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// stderrNote is " (stderr: LAST LINE)" when the server wrote something.
func (s *server) stderrNote() string {
	if line := s.stderr.lastLine(); line != "" {
		return fmt.Sprintf(" (stderr: %s)", line)
	}
	return ""
}

// tailWriter keeps the end of a server's stderr and forwards whole lines,
// prefixed with the server's name.
type tailWriter struct {
	mu      sync.Mutex
	prefix  string
	forward io.Writer
	tail    []byte
	partial []byte // an unfinished line, for forwarding
}

const stderrKeep = 4 << 10

func newTailWriter(name string, forward io.Writer) *tailWriter {
	return &tailWriter{prefix: "mcp " + name + ": ", forward: forward}
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail = append(w.tail, p...)
	if len(w.tail) > stderrKeep {
		w.tail = append(w.tail[:0:0], w.tail[len(w.tail)-stderrKeep:]...)
	}
	if w.forward != nil {
		w.partial = append(w.partial, p...)
		for {
			i := strings.IndexByte(string(w.partial), '\n')
			if i < 0 {
				break
			}
			fmt.Fprintf(w.forward, "%s%s\n", w.prefix, w.partial[:i])
			w.partial = w.partial[i+1:]
		}
		if len(w.partial) > stderrKeep { // a line without end: pass it on
			fmt.Fprintf(w.forward, "%s%s\n", w.prefix, w.partial)
			w.partial = w.partial[:0]
		}
	}
	return len(p), nil
}

// lastLine returns the last non-blank line written, cut to 300 runes.
func (w *tailWriter) lastLine() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := strings.Split(strings.ToValidUTF8(string(w.tail), "?"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if r := []rune(l); len(r) > 300 {
				l = string(r[:300]) + "…"
			}
			return l
		}
	}
	return ""
}
