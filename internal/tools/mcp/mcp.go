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
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/mcpauth"
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
	// Sandbox, when set, confines the commands whose Server.Sandbox is
	// set (--sandbox-mcp, a config file's "sandbox": true): their
	// processes are started inside it.
	Sandbox *sandbox.Sandbox
	// Getenv expands ${NAME} in Env and Headers; nil is os.Getenv.
	Getenv func(string) string
	// Warn receives a line for each Optional server left out.
	Warn io.Writer
	// NoNetwork is set when the run may not reach the network (--safe
	// without --allow-network): a remote server's tools then count as
	// exec, whatever their annotations say, so that --safe refuses them.
	NoNetwork bool
	// HTTP is the transport for remote servers; nil is a clone of
	// http.DefaultTransport.
	HTTP http.RoundTripper
	// CacheDir, when set, keeps each server's tool list between runs
	// (cache.go): a server whose list is known does not hold up Start.
	CacheDir string
	// Starting, when set, is told the names of the servers Start is
	// waiting for, each time that changes, and nil when it waits no more.
	Starting func(names []string)
	// Auth holds the sign-ins of `ask mcp login`, for remote servers that
	// want one; a zero Store has none.
	Auth mcpauth.Store
	// Ask puts a question to the person at the terminal, for a server's
	// request for input (elicitation); nil (no terminal) declines every
	// such request.
	Ask func(ctx context.Context, question string) (string, error)
}

func (o Options) getenv() func(string) string {
	if o.Getenv != nil {
		return o.Getenv
	}
	return os.Getenv
}

// Servers are the running servers of one run.
type Servers struct {
	slots []*slot
	names []string // of every server given, in order
	errs  []error  // why an Optional server was left out
	tools []tools.Tool
	once  sync.Once
	// late are the starts of servers whose tools came from the cache,
	// which go on while the run does.
	late sync.WaitGroup
}

// slot is one server, which may still be starting: a server whose tools
// were declared from the cache starts while the run goes on, and a call
// to one of its tools waits for it (wait).
type slot struct {
	name      string
	remote    string // a remote server's URL
	sandboxed bool
	ready     chan struct{} // closed once srv or err is set
	srv       *server
	err       error
	// late: the tools were declared from the cache. listed is then the
	// server's own list once it is up, by name, against which calls are
	// checked.
	late   bool
	listed map[string]*sdk.Tool
	abort  context.CancelFunc // ends a late start
}

// wait returns the server once it is up, or why it is not.
func (sl *slot) wait(ctx context.Context) (*server, error) {
	select {
	case <-sl.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("the MCP server %s was still starting (%v)", sl.name, context.Cause(ctx))
	}
	if sl.err != nil {
		return nil, fmt.Errorf("the MCP server %s did not start: %v", sl.name, sl.err)
	}
	return sl.srv, nil
}

type server struct {
	name      string    // the prefix of its tools' names
	cmd       *exec.Cmd // nil for a remote server
	session   *sdk.ClientSession
	stderr    *tailWriter
	pgid      atomic.Int64 // the server's process group, once started
	sandboxed bool         // confined by a working sandbox
	remote    string       // a remote server's URL
	// endSession ends a remote session's context, after Close.
	endSession func()
	stopWatch  func() bool // stops the context watch
	// warn receives what the person must do for a remote server (sign in
	// again), once.
	warn   io.Writer
	warned sync.Once
}

// warnOnce tells the person, once a run, that the server needs a new
// sign-in.
func (s *server) warnOnce(login *mcpauth.LoginNeeded) {
	if s.warn == nil {
		return
	}
	s.warned.Do(func() { fmt.Fprintf(s.warn, "ask: warning: %v\n", login) })
}

// Server is one MCP server to start (a command) or to connect to (a URL).
type Server struct {
	// Name is the prefix of its tools' names; "" derives one from the
	// command or the URL.
	Name string
	// Command is a command line as --mcp takes it; or Argv is the program
	// and its arguments, as a config file's command and args give them.
	Command string
	Argv    []string
	// Env adds variables to a command's environment; values may name
	// variables of ask's environment as ${NAME}.
	Env map[string]string
	// URL is a remote server's endpoint (http or https); Headers are sent
	// with every request, values expanded like Env's. Transport is
	// "" (streamable HTTP, falling back to SSE), "http" or "sse".
	URL       string
	Headers   map[string]string
	Transport string
	// OAuth is the config file's oauth object for a remote server: how
	// ask signs in to it (ask mcp login); nil uses a kept sign-in if
	// there is one.
	OAuth *mcpauth.Client
	// Sandbox starts the command inside Options.Sandbox.
	Sandbox bool
	// Optional servers that fail to start are left out, with a warning to
	// Options.Warn, and the run goes on without their tools.
	Optional bool
	// Origin names the server in errors: `--mcp "…"`, `config mcpServers.x`.
	Origin string
	// Dir is a command's working directory, relative to Options.Dir; ""
	// is Options.Dir.
	Dir string
	// DisabledTools are tools of the server not to offer, by their names
	// on the server.
	DisabledTools []string
	// Notes are what the caller should show when the server is started
	// (keys of its config entry that ask ignores).
	Notes []string
}

// Remote reports whether the server is reached over HTTP.
func (s Server) Remote() bool { return s.URL != "" }

func (s Server) origin() string {
	if s.Origin != "" {
		return s.Origin
	}
	if s.Remote() {
		return fmt.Sprintf("MCP server %q", s.URL)
	}
	return fmt.Sprintf("MCP server %q", s.Command)
}

// Start starts every server, concurrently, and lists their tools. The
// servers live until Close or until ctx is cancelled. If a server that is
// not Optional fails, the others are stopped and the error names it.
//
// With Options.CacheDir, a server whose tool list is in the cache is not
// waited for: its tools are declared from the cache, it goes on starting
// while the run does, and a call to one of its tools waits for it. Once it
// is up, the cache is rewritten if its list has changed. The run keeps the
// list it declared (the model was told it, the transcript records it):
// a declared tool the server no longer has, or no longer marks read-only,
// answers with an error saying so; a new tool is offered from the next
// run. A late server that fails is reported on Options.Warn, its tools
// answer with the failure, and its entry is dropped.
func Start(ctx context.Context, specs []Server, opts Options) (*Servers, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	names := newNamer(opts.Reserved...)
	plans, err := makePlans(specs, names, opts.getenv())
	if err != nil {
		return nil, err
	}
	cache := openCache(opts.CacheDir)

	s := &Servers{slots: make([]*slot, len(specs)), names: make([]string, len(specs)), errs: make([]error, len(specs))}
	errs := s.errs
	listed := make([][]*sdk.Tool, len(specs))
	waiting := newWaitList(opts.Starting)
	var wg sync.WaitGroup
	for i, p := range plans {
		s.names[i] = p.name
		sp := specs[i]
		o := opts
		if !sp.Sandbox || sp.Remote() {
			o.Sandbox = nil
		}
		if d := sp.Dir; d != "" {
			if !filepath.IsAbs(d) {
				d = filepath.Join(opts.Dir, d)
			}
			o.Dir = d
		}
		sl := &slot{name: p.name, remote: sp.URL, sandboxed: o.Sandbox.Active(), ready: make(chan struct{})}
		s.slots[i] = sl
		key := cacheKey(sp, p, opts.Dir, sl.sandboxed)
		start := func(ctx context.Context) (*server, []*sdk.Tool, error) {
			if sp.Remote() {
				return connectRemote(ctx, sp, p.name, o)
			}
			return startServer(ctx, sp.origin(), p.name, p.env, p.argv, o)
		}
		if entry := cache.load(key); entry != nil {
			listed[i], sl.late = entry.Tools, true
			lateCtx, abort := context.WithCancel(ctx)
			sl.abort = abort
			s.late.Go(func() {
				srv, got, err := start(lateCtx)
				switch {
				case err != nil && (ctx.Err() != nil || lateCtx.Err() != nil):
					// Stopped by the run's end, not failed: the entry stands.
				case err != nil:
					cache.drop(key)
					if opts.Warn != nil {
						fmt.Fprintf(opts.Warn, "ask: warning: %v; its tools answer with this error\n", err)
					}
				default:
					sl.listed = map[string]*sdk.Tool{}
					for _, t := range got {
						sl.listed[t.Name] = t
					}
					storeList(cache, key, srv, got, opts.Warn)
				}
				sl.srv, sl.err = srv, err
				close(sl.ready)
			})
			continue
		}
		waiting.add(p.name)
		wg.Go(func() {
			var srv *server
			srv, listed[i], errs[i] = start(ctx)
			sl.srv, sl.err = srv, errs[i]
			if errs[i] == nil {
				storeList(cache, key, srv, listed[i], opts.Warn)
			}
			close(sl.ready)
			waiting.done(p.name)
		})
	}
	waiting.show()
	wg.Wait()
	waiting.end()
	for i, err := range errs { // the first failure, in the given order
		if err == nil {
			continue
		}
		if specs[i].Optional && ctx.Err() == nil {
			if opts.Warn != nil {
				fmt.Fprintf(opts.Warn, "ask: warning: %v; going on without its tools\n", err)
			}
			continue
		}
		s.Close()
		return nil, err
	}
	for i, sl := range s.slots {
		if errs[i] != nil {
			continue
		}
		for _, t := range listed[i] {
			if slices.Contains(specs[i].DisabledTools, t.Name) {
				continue
			}
			s.tools = append(s.tools, newRemoteTool(sl, names.tool(sl.name, t.Name), t, opts.NoNetwork))
		}
	}
	return s, nil
}

// storeList writes a server's list to the cache; a cache that cannot be
// written costs the next run its head start, which is worth a warning.
func storeList(cache *toolCache, key string, srv *server, list []*sdk.Tool, warn io.Writer) {
	e := cacheEntry{Tools: list}
	if srv.session != nil {
		if init := srv.session.InitializeResult(); init != nil && init.ServerInfo != nil {
			e.Server, e.Version = init.ServerInfo.Name, init.ServerInfo.Version
		}
	}
	if _, err := cache.store(key, e); err != nil && warn != nil {
		fmt.Fprintf(warn, "ask: warning: %v\n", err)
	}
}

// waitList tells Options.Starting which servers Start still waits for.
type waitList struct {
	mu    sync.Mutex
	names []string
	any   bool // whether there was anything to wait for
	tell  func([]string)
}

func newWaitList(tell func([]string)) *waitList { return &waitList{tell: tell} }

// add is called as each server starts, while those started before may
// be done already (done, on their goroutines).
func (w *waitList) add(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.names = append(w.names, name)
	w.any = true
}

// show tells the first list, if there is one.
func (w *waitList) show() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tell != nil && len(w.names) > 0 {
		w.tell(slices.Clone(w.names))
	}
}

func (w *waitList) done(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.names = slices.DeleteFunc(w.names, func(n string) bool { return n == name })
	if w.tell != nil && len(w.names) > 0 {
		w.tell(slices.Clone(w.names))
	}
}

// end tells that nothing is waited for any more.
func (w *waitList) end() {
	if w.tell != nil && w.any {
		w.tell(nil)
	}
}

type plan struct {
	env, argv []string
	name      string
}

// makePlans checks the servers and names them, in order.
func makePlans(specs []Server, names *namer, getenv func(string) string) ([]plan, error) {
	plans := make([]plan, len(specs))
	for i, sp := range specs {
		var p plan
		var err error
		switch {
		case sp.Remote():
			err = checkURL(sp.URL)
			p.name = sp.Name
			if p.name == "" {
				p.name = urlBaseName(sp.URL)
			}
		case len(sp.Argv) > 0:
			p.argv = sp.Argv
			p.env, err = expandEnv(sp.Env, getenv)
			p.name = cmp.Or(sp.Name, serverBaseName(sp.Argv))
		default:
			p.env, p.argv, err = splitCommand(sp.Command)
			if err == nil {
				p.name = cmp.Or(sp.Name, serverBaseName(p.argv))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", sp.origin(), err)
		}
		// A name the user chose is kept (sanitized); a derived one loses
		// its mcp-server- decorations.
		base := sanitize(p.name)
		if sp.Name == "" {
			base = trimDecorations(base)
		}
		if len(base) > maxServerNameLen {
			base = strings.TrimRight(base[:maxServerNameLen], "_-")
		}
		p.name = names.server(cmp.Or(base, "mcp"))
		plans[i] = p
	}
	return plans, nil
}

// Names are the names the servers' tools would be declared under
// (SERVER__TOOL), in order, without starting them.
func Names(specs []Server, reserved ...string) []string {
	n := newNamer(reserved...)
	out := make([]string, len(specs))
	for i, sp := range specs {
		// Only the name is wanted: a server whose variables are unset
		// still has one.
		plans, err := makePlans([]Server{sp}, n, func(string) string { return "set" })
		if err != nil {
			out[i] = cmp.Or(sanitize(sp.Name), "?")
			continue
		}
		out[i] = plans[0].name
	}
	return out
}

// Listed is one server after Start: its name, its tools and, for an
// Optional server that was left out, why.
type Listed struct {
	Name  string
	Tools []tools.Tool
	Err   error
}

// Listing describes every server given to Start, in order.
func (s *Servers) Listing() []Listed {
	out := make([]Listed, len(s.names))
	for i, name := range s.names {
		out[i] = Listed{Name: name, Err: s.errs[i]}
		for _, t := range s.tools {
			if strings.HasPrefix(t.Info().Name, name+separator) {
				out[i].Tools = append(out[i].Tools, t)
			}
		}
	}
	return out
}

// Tools returns the servers' tools, server by server in flag order, each
// server's in the order it listed them.
func (s *Servers) Tools() []tools.Tool { return s.tools }

// Close stops every server, concurrently: stdin is closed, a server that
// does not exit within 2 s gets SIGTERM, then SIGKILL, and its whole
// process group is killed last. A server still starting is stopped at
// once. Close may be called more than once.
func (s *Servers) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		for _, sl := range s.slots {
			if sl == nil || !sl.late {
				continue
			}
			select {
			case <-sl.ready:
			default:
				sl.abort() // nobody called its tools: no need to wait for it
			}
		}
		s.late.Wait()
		var wg sync.WaitGroup
		for _, sl := range s.slots {
			if sl != nil && sl.srv != nil {
				wg.Go(sl.srv.stop)
			}
		}
		wg.Wait()
		for _, sl := range s.slots {
			if sl != nil && sl.abort != nil {
				sl.abort()
			}
		}
	})
}

func startServer(ctx context.Context, origin, name string, env, argv []string, opts Options) (*server, []*sdk.Tool, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", origin, fmt.Sprintf(format, args...))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if errors.Is(cmd.Err, exec.ErrNotFound) || errors.Is(cmd.Err, exec.ErrDot) {
		return nil, nil, fail("cannot start %s: %v", argv[0], cmd.Err)
	}
	cmd.Dir = opts.Dir
	cmd.Env = append(append([]string(nil), opts.Env...), env...)
	srv := &server{name: name, cmd: cmd, stderr: newTailWriter(name, opts.Stderr)}
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
		clientOptions(name, opts))
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
			return nil, nil, fmt.Errorf("%s: %w", origin, context.Cause(ctx))
		case startCtx.Err() != nil:
			return nil, nil, fail("it started but did not answer the MCP handshake within %s%s", opts.StartTimeout, srv.stderrNote())
		}
		return nil, nil, fail("the MCP handshake failed: %v%s", exitNote(cmd, err), srv.stderrNote())
	}
	srv.session = session
	srv.stopWatch = context.AfterFunc(ctx, srv.killGroup) // Ctrl-C, or the run's end

	listed, err := srv.listTools(ctx, startCtx, origin)
	if err != nil {
		return nil, nil, err
	}
	if !stopKill() { // the start timed out just now and the server is gone
		srv.stop()
		return nil, nil, fail("it did not list its tools within %s", opts.StartTimeout)
	}
	return srv, listed, nil
}

// listTools reads the tools of a server that has just answered the
// handshake, within startCtx, and stops the server if it cannot. A run
// stopped meanwhile (ctx) is reported by its cause.
func (s *server) listTools(ctx, startCtx context.Context, origin string) ([]*sdk.Tool, error) {
	var listed []*sdk.Tool
	for t, err := range s.session.Tools(startCtx, nil) {
		if err != nil {
			s.stop()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", origin, context.Cause(ctx))
			}
			return nil, fmt.Errorf("%s: listing its tools failed: %v%s", origin, err, s.stderrNote())
		}
		listed = append(listed, t)
	}
	return listed, nil
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
	if s.endSession != nil {
		s.endSession()
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

// stderrNote is " (stderr: LINE | LINE)" when the server wrote something:
// the lines of its stderr's tail that say why it failed (see reasons).
func (s *server) stderrNote() string {
	if lines := s.stderr.reasons(); len(lines) > 0 {
		return fmt.Sprintf(" (stderr: %s)", strings.Join(lines, " | "))
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

// stderrKeep bounds the tail kept for error messages.
const stderrKeep = 8 << 10

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

// reasons picks from the kept tail the lines that say why a server
// failed: the last few that read like an error, without the boilerplate
// of launchers (npm's "A complete log of this run…", its bare "npm error
// 404" lines), or else the last line. npx's failure ends with the log's
// path; the "404 Not Found" that matters comes lines before.
func (w *tailWriter) reasons() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var lines, telling []string
	for _, l := range strings.Split(strings.ToValidUTF8(string(w.tail), "?"), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || isBoilerplate(l) {
			continue
		}
		if r := []rune(l); len(r) > maxReasonRunes {
			l = string(r[:maxReasonRunes]) + "…"
		}
		lines = append(lines, l)
		if tellsWhy(l) && !slices.Contains(telling, l) {
			telling = append(telling, l)
		}
	}
	switch {
	case len(telling) > maxReasons:
		return telling[len(telling)-maxReasons:]
	case len(telling) > 0:
		return telling
	case len(lines) > 0:
		return lines[len(lines)-1:]
	}
	return nil
}

const (
	maxReasons     = 3
	maxReasonRunes = 200
)

// boilerplate are lines launchers print around every failure. Compiled
// on first use: only a server that failed to start needs it, and every
// start of ask would pay for it.
var boilerplate = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^npm (error|ERR!)( \d+)?( (A complete log of this run|Note that you can also install|tarball, folder, http url).*)?$|^npm (warn|notice) `)
})

func isBoilerplate(l string) bool { return boilerplate().MatchString(l) }

// tellingWords are words of lines that say what went wrong.
var tellingWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)error|not found|\b[45]\d\d\b|denied|cannot|can't|could not|couldn't|failed|fatal|exception|no such|enoent|eacces|refused|invalid|missing|panic|unknown|not installed|not allowed|permission|unauthori[sz]ed|forbidden`)
})

func tellsWhy(l string) bool { return tellingWords().MatchString(l) }
