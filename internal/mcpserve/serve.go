// Package mcpserve is ask as an MCP server (ask mcp serve): another agent,
// or an editor, calls the tool `ask` to hand a task to a run of ask, and
// `ask_reply` to carry a kept run's conversation on. Every run is built
// through internal/run like any other and kept like any other; the serve
// command's flags are every run's policy, and what a client sends only
// narrows it (a stricter mode, a directory inside the working directory).
package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
)

// Server serves runs of ask over MCP.
type Server struct {
	// Inputs are the serve command's: its typed flags (every run's
	// policy), the config file, the environment and the directory it
	// started in.
	Inputs run.Inputs
	// Env is the world each run is built in; it has no prompter: a call
	// that needs approval is allowed only by the serve command's flags,
	// rules and hooks, never by the client.
	Env run.Env
	// History keeps every run, for ask log, ask_reply and --continue.
	History *history.Store
	Version string
	// Secrets is told of every secret a run holds (for the caller's
	// redactor); nil for none.
	Secrets func(...string)

	base run.Settings // the serve command's own, resolved once
}

// AskArgs are the arguments of the tool `ask`.
type AskArgs struct {
	Prompt  string `json:"prompt" jsonschema:"the task or question: ask works on it with its tools in its working directory, under the serve command's policy, and answers"`
	Mode    string `json:"mode,omitempty" jsonschema:"ask (read-only, at most 3 steps), plan (read-only, answers with a numbered plan) or agent; at most what the serve command allows"`
	Workdir string `json:"workdir,omitempty" jsonschema:"a directory inside the serve command's working directory to work in (relative to it, or absolute)"`
}

// ReplyArgs are the arguments of the tool `ask_reply`.
type ReplyArgs struct {
	RunID  string `json:"run_id" jsonschema:"the run_id an earlier call of ask or ask_reply returned"`
	Prompt string `json:"prompt" jsonschema:"what to say next in that run's conversation"`
}

// Outcome is a run's result, as a tool's structured content.
type Outcome struct {
	RunID   string   `json:"run_id" jsonschema:"the run, kept: pass it to ask_reply to carry the conversation on"`
	Status  string   `json:"status" jsonschema:"how the run ended: completed, max_steps, denied, interrupted, error, ..."`
	Answer  string   `json:"answer"`
	Steps   int      `json:"steps"`
	Changes []string `json:"changes,omitempty" jsonschema:"the files the run changed"`
}

// New checks the serve command's settings and makes the MCP server.
func (s *Server) New() (*sdk.Server, error) {
	base, err := run.Resolve(s.Inputs)
	if err != nil {
		return nil, err
	}
	s.base = base
	srv := sdk.NewServer(&sdk.Implementation{Name: "ask", Title: "ask", Version: s.Version}, &sdk.ServerOptions{
		Instructions: "ask runs a language model with tools (read, search, edit files, run commands) in " + s.workdir() +
			" and answers. Call ask with a task; call ask_reply with its run_id to carry the conversation on.",
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "ask", Title: "Ask ask",
		Description: "Hand a task or question to ask: a run of a language model that reads, searches and (if the server's policy allows) edits files and runs commands in " + s.workdir() + ", then answers. Returns the answer and the run_id."}, s.ask)
	sdk.AddTool(srv, &sdk.Tool{Name: "ask_reply", Title: "Reply to an ask run",
		Description: "Carry on the conversation of an earlier run of ask, by its run_id, with a new prompt."}, s.reply)
	return srv, nil
}

func (s *Server) workdir() string { return run.AbsPath(s.Inputs.Wd, s.base.Workdir.Value) }

func (s *Server) ask(ctx context.Context, req *sdk.CallToolRequest, in AskArgs) (*sdk.CallToolResult, Outcome, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, Outcome{}, errors.New("prompt is empty: say what ask should do")
	}
	inputs, err := s.narrow(in.Mode, in.Workdir)
	if err != nil {
		return nil, Outcome{}, err
	}
	return s.execute(ctx, req, inputs, in.Prompt)
}

func (s *Server) reply(ctx context.Context, req *sdk.CallToolRequest, in ReplyArgs) (*sdk.CallToolResult, Outcome, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, Outcome{}, errors.New("prompt is empty: say what comes next")
	}
	if !history.IsID(in.RunID) {
		return nil, Outcome{}, fmt.Errorf("run_id %q is not a run's id: give the run_id an ask call returned", in.RunID)
	}
	inputs, err := s.carryOn(in.RunID)
	if err != nil {
		return nil, Outcome{}, err
	}
	return s.execute(ctx, req, inputs, in.Prompt)
}

// carryOn is the serve command's settings carrying on kept run id. Only a
// kept run (never a file of the working directory named like one) made in
// the serve command's working directory may be carried on, and what it
// carries (its mode, its provider) only narrows the serve command's, as a
// client's arguments do: another directory's conversation, or the
// person's own agent-mode run under a server kept to mode ask, would
// widen what the client may see or do.
func (s *Server) carryOn(id string) (run.Inputs, error) {
	in := s.Inputs
	if s.History == nil || s.History.Dir == "" {
		return in, errors.New("no runs are kept here, so there is none to reply to")
	}
	e, err := s.History.Find(id)
	if err != nil {
		return in, err
	}
	if _, _, err := inside(s.workdir(), e.Workdir); err != nil {
		return in, fmt.Errorf("run %s: its working directory is outside this server's working directory %s", id, s.workdir())
	}
	in.Resume = e.Path
	carried, err := run.Resolve(in)
	if err != nil {
		return in, err
	}
	layer := settings.Layer{"mode": carried.Mode.Value, "provider": carried.Provider.Value}
	if _, err := settings.Narrow(s.base.Values, layer, "run "+id+", carried on"); err != nil {
		return in, err
	}
	return in, nil
}

// narrow lays a client's mode and directory over the serve command's
// settings, through the rows' one check (settings.Narrow): a mode at most
// the serve command's, a directory inside its working directory (links
// resolved first, so that one pointing out is refused too).
func (s *Server) narrow(mode, workdir string) (run.Inputs, error) {
	in := s.Inputs
	layer := settings.Layer{}
	if mode != "" {
		layer["mode"] = mode
	}
	var dir string
	if workdir != "" {
		var rel string
		var err error
		if dir, rel, err = inside(s.workdir(), workdir); err != nil {
			return in, err
		}
		layer["workdir"] = rel
	}
	narrowed, err := settings.Narrow(s.base.Values, layer, "the MCP client's arguments")
	if err != nil {
		return in, err
	}
	if mode != "" {
		in.Flags.Mode = narrowed.Mode
	}
	if dir != "" {
		in.Flags.Workdir = settings.Given(dir, "the MCP client's arguments")
	}
	return in, nil
}

// inside resolves dir (relative to root, or absolute) and says whether it
// is root or below it, links resolved: a client may not send a run out of
// the serve command's working directory. It returns the directory, links
// resolved, and its path relative to root's real path.
func inside(root, dir string) (real, rel string, err error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", "", fmt.Errorf("the server's working directory: %w", err)
	}
	if real, err = filepath.EvalSymlinks(dir); err != nil {
		return "", "", fmt.Errorf("workdir %q: %w", dir, errors.Unwrap(err))
	}
	rel, err = filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "", fmt.Errorf("workdir %q is outside this server's working directory %s", dir, root)
	}
	if info, err := os.Stat(real); err != nil || !info.IsDir() {
		return "", "", fmt.Errorf("workdir %q is not a directory", dir)
	}
	return real, rel, nil
}

// execute builds and runs one run, telling the client of its progress.
// A run that did not complete is a tool error whose text says why; a
// cancelled call (notifications/cancelled) interrupts the run.
func (s *Server) execute(ctx context.Context, req *sdk.CallToolRequest, in run.Inputs, prompt string) (*sdk.CallToolResult, Outcome, error) {
	settings, err := run.Resolve(in)
	if err != nil {
		return nil, Outcome{}, err
	}
	ctx, cancel := loop.WithTimeout(ctx, settings.Timeout.Value)
	defer cancel()
	r, err := run.New(ctx, settings, s.Env)
	if err != nil {
		return nil, Outcome{}, err
	}
	defer r.Close()
	if s.Secrets != nil {
		s.Secrets(r.Secrets()...)
	}
	res := r.Execute(ctx, prompt, run.Output{History: s.History, OnProgress: progress(ctx, req)})
	out := Outcome{RunID: res.ID, Status: res.Status, Answer: res.Answer, Steps: res.Steps}
	for _, c := range res.Changes {
		out.Changes = append(out.Changes, c.Path)
	}
	text := res.Answer
	if res.Status != loop.StatusCompleted {
		why := res.Why
		if why == "" && res.Err != nil {
			why = res.Err.Error()
		}
		text = fmt.Sprintf("The run ended %s: %s\n%s", res.Status, why, res.Answer)
	}
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: text}},
		IsError: res.Status != loop.StatusCompleted,
	}, out, nil
}

// progress tells the client, when it asked for progress, each step and
// each tool call as it starts.
func progress(ctx context.Context, req *sdk.CallToolRequest) func(loop.Progress) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	var mu sync.Mutex
	n := 0
	return func(p loop.Progress) {
		mu.Lock()
		defer mu.Unlock()
		n++
		msg := fmt.Sprintf("step %d of at most %d: waiting for the model", p.Step, p.MaxSteps)
		if p.Tool != "" {
			msg = fmt.Sprintf("step %d: %s", p.Step, p.Tool)
		}
		req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
	}
}

// ServeStdio serves one client on in and out until in ends.
func ServeStdio(ctx context.Context, srv *sdk.Server, in io.Reader, out io.Writer) error {
	err := srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// CheckListen says what is wrong with a --listen address: it must be a
// loopback address and a port, since whoever connects runs commands here.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("--listen %q: give a loopback address and port, such as 127.0.0.1:8080", addr)
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--listen %q: ask serves only on loopback (127.0.0.1, ::1): whoever connects runs its tools", addr)
	}
	return nil
}

// ServeHTTP serves streamable HTTP at addr (a loopback address) until ctx
// ends; ready, when set, is told the address once it listens. Only the
// processes of the user ask runs as are served (every user of the machine
// reaches loopback); refused, when set, is told of each other connection.
// Requests whose Host is not a loopback name are refused (DNS rebinding),
// and so are cross-origin ones from a browser.
func ServeHTTP(ctx context.Context, srv *sdk.Server, addr string, ready func(net.Addr), refused func(why string)) error {
	if err := CheckListen(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	ln = sameUserListener{Listener: ln, uid: os.Getuid(), refuse: refused}
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	hs := &http.Server{Handler: http.NewCrossOriginProtection().Handler(handler), ReadHeaderTimeout: 10 * time.Second}
	if ready != nil {
		ready(ln.Addr())
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(shut)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
