package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

func init() {
	// -v is --verbose; urfave/cli would take it for --version.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and commit"}
}

func runFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "provider", Aliases: []string{"p"}, Usage: "provider: " + strings.Join(catalog.Names(), ", ") + " (default: $ASK_PROVIDER, else the first whose key is set)"},
		&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model name (default: $ASK_MODEL, else the provider's default)"},
		&cli.StringFlag{Name: "base-url", Usage: "provider base URL (default: $ASK_BASE_URL, else the provider's variable or default)"},
		&cli.StringFlag{Name: "system", Aliases: []string{"s"}, Usage: "text appended to the default system prompt"},
		&cli.IntFlag{Name: "max-steps", Value: loop.DefaultMaxSteps, Usage: "stop after this many model requests"},
		&cli.DurationFlag{Name: "timeout", Value: loop.DefaultTimeout, Usage: "stop the whole run after this long"},
		&cli.StringFlag{Name: "mode", Value: policy.ModeAgent, Usage: "ask (read-only, at most 3 steps), plan (read-only, answers with a numbered plan) or agent (all tools)"},
		&cli.BoolFlag{Name: "safe", Usage: "CI profile: offer only read-only tools, refuse every write or command, exit 6 on a refusal"},
		&cli.StringSliceFlag{Name: "allow-tool", Usage: "run calls matching `PATTERN` (NAME or NAME:ARG-PREFIX*) without asking; repeatable"},
		&cli.StringSliceFlag{Name: "deny-tool", Usage: "refuse calls matching `PATTERN`; wins over --allow-tool; repeatable"},
		&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "approve every call that needs approval"},
		&cli.StringFlag{Name: "plan", Usage: "carry out the plan saved in `FILE` (with --mode agent)"},
		&cli.BoolFlag{Name: "no-tools", Usage: "offer the model no tools"},
		&cli.StringFlag{Name: "tools-file", Usage: "offer the commands declared in the JSON `FILE` as tools"},
		&cli.StringSliceFlag{Name: "mcp", Usage: "start the MCP server `'CMD ARGS'` over stdio and offer its tools as SERVER__TOOL; repeatable"},
		&cli.StringFlag{Name: "workdir", Value: ".", Usage: "the directory the tools work in; file tools never reach outside it"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object with the answer, status, steps, tool calls and usage"},
		&cli.BoolFlag{Name: "events", Usage: "print every event as a JSON line as it happens"},
		&cli.StringFlag{Name: "transcript", Usage: "write every event to `FILE` as JSON lines"},
		&cli.BoolFlag{Name: "no-stream", Usage: "make plain requests instead of streaming"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors on stderr"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "describe each request, retry and tool call on stderr"},
		&cli.StringFlag{Name: "tool-protocol", Value: toolProtoAuto, Usage: "how the model calls tools: auto (native where the provider has it, else json), native, or the text protocols json and markdown"},
		&cli.StringFlag{Name: "command", Usage: "with --provider command: the model to run once per step, conversation on stdin (e.g. 'ollama run qwen3')"},
		retriesFlag(),
	}, append(answerFlags(), settingsFlags()...)...)
}

func runAction(c *cli.Context, stdio *IO) error {
	if c.Bool("json") && c.Bool("events") {
		return usageErr("--json and --events both write to stdout: choose one")
	}
	s, prompt, cleanup, err := prepareRun(c, stdio, buildSession)
	defer cleanup()
	if err != nil {
		return err
	}
	s.prompt = prompt
	s.carried = carriedFrom(c, stdio)
	s.jsonOut, s.events, s.transcript = c.Bool("json"), c.Bool("events"), c.String("transcript")
	s.quiet, s.verbose = c.Bool("quiet"), c.Bool("verbose")
	return s.execute(c.Context)
}

// prepareRun reads the prompt (or the --plan goal) and any earlier
// conversation, and builds the session the main command's flags describe,
// with build: buildSession for a run, sessionWithoutKey for `ask provider
// request`, which must print exactly what a run would send first. The
// cleanup is never nil.
func prepareRun(c *cli.Context, stdio *IO, build func(*cli.Context, *IO) (*session, func(), error)) (*session, string, func(), error) {
	noop := func() {}
	prompt, err := readPrompt(c.Args().Slice(), stdio)
	if err != nil && !c.IsSet("plan") {
		return nil, "", noop, err
	}
	if c.IsSet("plan") {
		if prompt, err = planPrompt(c, stdio, prompt); err != nil {
			return nil, "", noop, err
		}
	}
	conv, err := readConversation(c, stdio)
	if err != nil {
		return nil, "", noop, err
	}
	s, cleanup, err := build(c, stdio)
	if err == nil {
		err = useAnswerOptions(c, stdio, s, conv)
	}
	if err == nil {
		err = useToolProtocol(c, stdio, s)
	}
	if err != nil {
		return nil, "", cleanup, err
	}
	return s, prompt, cleanup, nil
}

// planPrompt makes a saved plan the goal of an agent run: `ask --plan
// FILE [extra instructions]`.
func planPrompt(c *cli.Context, stdio *IO, extra string) (string, error) {
	if m := c.String("mode"); m != policy.ModeAgent {
		return "", usageErr("--plan carries a plan out, which needs --mode agent (not %s)", m)
	}
	plan, err := os.ReadFile(absPath(stdio.Wd, c.String("plan")))
	if err != nil {
		return "", usageErr("--plan: %v", err)
	}
	if strings.TrimSpace(string(plan)) == "" {
		return "", usageErr("--plan: %s is empty", c.String("plan"))
	}
	prompt := "Carry out this plan, step by step, and report what you did:\n\n" + strings.TrimSpace(string(plan))
	if extra != "" {
		prompt += "\n\n" + extra
	}
	return prompt, nil
}

// buildSession turns the flags shared by the main command and `ask provider
// request` into a session: provider, model, tools, policy and system prompt.
// The returned cleanup runs even on error.
func buildSession(c *cli.Context, stdio *IO) (*session, func(), error) {
	cleanups := []func(){}
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	conf, err := sessionConfig(c, stdio)
	if err != nil {
		return nil, cleanup, err
	}
	mode := c.String("mode")
	if !policy.ValidMode(mode) {
		return nil, cleanup, usageErr("--mode %q: choose ask, plan or agent", mode)
	}
	prov, err := catalog.Select(c.String("provider"), conf.providerName(), stdio.Getenv)
	if err != nil {
		return nil, cleanup, withCode(exitUsage, err)
	}
	prov = conf.configure(prov)
	proto, err := catalog.NewProtocol(prov.Protocol)
	if err != nil {
		return nil, cleanup, err
	}
	model := firstNonEmpty(c.String("model"), stdio.Getenv("ASK_MODEL"), conf.model(prov.Name), prov.DefaultModel)
	if model == "" {
		return nil, cleanup, usageErr("%s has no default model: name one with --model", prov.Name)
	}
	key, err := conf.key(prov)
	if err != nil {
		return nil, cleanup, err
	}
	maxSteps := c.Int("max-steps")
	if maxSteps < 1 {
		return nil, cleanup, usageErr("--max-steps must be at least 1")
	}
	if mode == policy.ModeAsk {
		maxSteps = min(maxSteps, policy.AskModeMaxSteps)
	}
	if c.Duration("timeout") <= 0 {
		return nil, cleanup, usageErr("--timeout must be positive, such as 30s or 5m")
	}
	nRetries, err := retries(c)
	if err != nil {
		return nil, cleanup, err
	}
	allow, err := policy.ParsePatterns(c.StringSlice("allow-tool"))
	if err != nil {
		return nil, cleanup, usageErr("--allow-tool: %v", err)
	}
	deny, err := policy.ParsePatterns(c.StringSlice("deny-tool"))
	if err != nil {
		return nil, cleanup, usageErr("--deny-tool: %v", err)
	}
	root, err := tools.NewRoot(absPath(stdio.Wd, c.String("workdir")))
	if err != nil {
		return nil, cleanup, usageErr("--workdir: %v", err)
	}

	var all []tools.Tool
	if !c.Bool("no-tools") {
		all = tools.Builtins(root)
	}
	extra, stopExtra, err := extraTools(c, stdio, root, all)
	if cleanups = append(cleanups, stopExtra); err != nil {
		return nil, cleanup, err
	}
	all = append(all, extra...)
	// A person is asked only when one is watching stderr and a terminal can
	// be opened; otherwise gated calls are denied at once.
	// The status line is made here, before the run, so that an approval
	// question can hold it off the terminal while it is open.
	status := statusFor(stdio, c.Bool("quiet"))
	var prompter policy.Prompter
	if stdio.ErrTTY {
		if t, closeTTY := openTerminal(stdio.TTYPath); t != nil {
			t.Out = stdio.paint.approvals(t.Out)
			prompter = holdWhileAsking(status, t)
			cleanups = append(cleanups, closeTTY)
		}
	}
	pol := policy.New(mode, c.Bool("safe"), c.Bool("yes"), allow, deny, prompter, all)
	registry, err := tools.NewRegistry(pol.Declared(all)...)
	if err != nil {
		return nil, cleanup, err
	}
	baseURL := prov.ResolveBaseURL(c.String("base-url"), stdio.Getenv)
	declared := declare(registry)
	system := prompts.System(prompts.Env{
		Version: version, Date: stdio.Now(), OS: runtime.GOOS, Workdir: root.Dir(), Mode: mode, Tools: len(declared) > 0,
	}, c.String("system"))

	return &session{
		io:        stdio,
		provider:  prov.Name,
		modelName: model,
		baseURL:   baseURL,
		mode:      mode,
		model: &providers.Caller{
			Provider: prov.Name, Protocol: proto, BaseURL: baseURL, Model: model, Key: key,
			Header: prov.Header, HTTP: stdio.HTTP, Retries: nRetries, IdleTimeout: streamIdleTimeout,
		},
		system:   system,
		declared: declared,
		status:   status,
		toolbox:  registry,
		gate:     pol,
		workdir:  root.Dir(),
		maxSteps: maxSteps,
		timeout:  c.Duration("timeout"),
		stream:   !c.Bool("no-stream"),
	}, cleanup, nil
}

// readPrompt joins the arguments and, when stdin is not a terminal, appends
// what it holds as context. "-" alone means the prompt is stdin.
func readPrompt(args []string, stdio *IO) (string, error) {
	fromStdin := len(args) == 1 && args[0] == "-"
	if fromStdin {
		args = nil
	}
	prompt := strings.TrimSpace(strings.Join(args, " "))
	var input string
	if !stdio.InTTY && stdio.In != nil {
		b, err := io.ReadAll(stdio.In)
		if err != nil {
			return "", usageErr("read stdin: %v", err)
		}
		input = strings.TrimSpace(string(b))
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

// declare converts the registry's tools into the standardized declarations.
func declare(r *tools.Registry) []providers.Tool {
	var out []providers.Tool
	for _, t := range r.List() {
		info := t.Info()
		out = append(out, providers.Tool{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
	}
	return out
}

// userTools are the declared tools that do not come with ask.
func userTools(declared []providers.Tool) []providers.Tool {
	var out []providers.Tool
	for _, t := range declared {
		if !tools.IsBuiltin(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// session is one run of the loop with its output: the main command builds
// it from flags, replay from a transcript.
type session struct {
	io        *IO
	provider  string
	modelName string
	baseURL   string
	model     loop.Model // speaks the run's protocol (model.CurrentProtocol)
	system    string
	prompt    string
	declared  []providers.Tool
	toolbox   loop.Toolbox
	gate      loop.Gate
	status    *statusLine // the live line on stderr; nil makes a new one
	workdir   string
	mode      string
	maxSteps  int
	timeout   time.Duration
	stream    bool
	maxTokens int
	schema    json.RawMessage   // --schema, compiled and compacted
	history   []json.RawMessage // an earlier conversation (--continue, --resume)
	lastPath  string            // where to keep this run for --continue; "" keeps none
	carried   carriedSettings   // recorded for --continue (conversation.go)

	jsonOut, events, quiet, verbose bool
	transcript                      string
	// sink, when set, receives every event too (replay --check uses it).
	sink io.Writer
}

// finalJSON is what --json prints.
type finalJSON struct {
	Status    string          `json:"status"`
	Answer    string          `json:"answer"`
	Provider  string          `json:"provider"`
	Model     string          `json:"model"`
	Steps     int             `json:"steps"`
	ToolCalls []loop.Call     `json:"tool_calls"`
	Usage     providers.Usage `json:"usage"`
	// UsagePerStep is each model request's usage, in step order.
	UsagePerStep []records.StepUsage `json:"usage_per_step"`
	Denials      []records.Denial    `json:"denials"`
	Error        string              `json:"error,omitempty"`
	ExitCode     int                 `json:"exit_code"`
}

func (s *session) execute(ctx context.Context) error {
	var transcript *os.File
	if s.transcript != "" {
		f, err := os.Create(s.transcript)
		if err != nil {
			return usageErr("--transcript: %v", err)
		}
		defer f.Close()
		transcript = f
	}
	var eventsOut io.Writer
	if s.events {
		eventsOut = s.io.Out
	}
	last := s.startLastRun()
	defer s.finishLastRun(last)
	rec := records.NewRecorder(fileOrNil(transcript), eventsOut, s.sink, last.writer())
	status := s.status
	if status == nil { // replay asks nobody, and makes none
		status = statusFor(s.io, s.quiet)
	}
	rec.Observe(func(ev records.Event) { s.note(status, ev) })

	var toolNames []string
	for _, t := range s.declared {
		toolNames = append(toolNames, t.Name)
	}
	rec.Emit(records.Event{Type: records.TypeRunStarted, Version: version, Provider: s.provider, Model: s.modelName, Mode: s.mode,
		Settings: &records.Settings{Prompt: s.prompt, System: s.system, BaseURL: s.baseURL, Workdir: s.workdir, MaxSteps: s.maxSteps,
			Timeout: s.timeout.String(), Stream: s.stream, Tools: toolNames, MaxTokens: s.maxTokens, Schema: s.schema, History: s.history,
			ToolProtocol: s.carried.toolProtocol, Safe: s.carried.safe, ToolsFile: s.carried.toolsFile, MCP: s.carried.mcp,
			UserTools: userTools(s.declared)}})

	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, loop.ErrTimeout)
	defer cancel()

	live := s.io.OutTTY && !s.jsonOut && !s.events && len(s.schema) == 0 // a schema answer is printed once validated
	streamed := false
	cfg := loop.Config{
		Model: s.model, System: s.system, Prompt: s.prompt,
		Tools: s.declared, Toolbox: s.toolbox, Gate: s.gate, MaxSteps: s.maxSteps,
		Stream: s.stream, MaxTokens: s.maxTokens, Schema: s.schema, History: s.history, Recorder: rec,
		OnProgress: status.progress,
	}
	if live {
		cfg.OnText = func(text string) {
			status.clear()
			streamed = true
			io.WriteString(s.io.Out, text)
			status.wrote(text)
		}
	}
	res := loop.Run(ctx, cfg)
	status.clear()

	code, msg := outcome(res, s.maxSteps, s.timeout)
	switch {
	case s.jsonOut:
		out := finalJSON{Status: res.Status, Answer: res.Answer, Provider: s.provider, Model: s.modelName, Steps: res.Steps,
			ToolCalls: res.Calls, Usage: res.Usage, UsagePerStep: res.UsagePerStep, Denials: res.Denials, ExitCode: code}
		if out.ToolCalls == nil {
			out.ToolCalls = []loop.Call{}
		}
		if out.UsagePerStep == nil {
			out.UsagePerStep = []records.StepUsage{}
		}
		if out.Denials == nil {
			out.Denials = []records.Denial{}
		}
		if res.Err != nil {
			out.Error = res.Err.Error()
		}
		writeJSON(s.io.Out, out, s.io.OutTTY)
	case s.events:
		// run.finished below carries the answer.
	case streamed:
		if !strings.HasSuffix(res.Answer, "\n") {
			io.WriteString(s.io.Out, "\n")
		}
	case res.Status == loop.StatusSchemaFailed:
		// An answer that does not match --schema is not data; --json shows it.
	case res.Answer != "":
		io.WriteString(s.io.Out, strings.TrimRight(res.Answer, "\n")+"\n")
	}

	answer := res.Answer
	rec.Emit(records.Event{Type: records.TypeRunFinished, Status: res.Status, Answer: &answer, Steps: res.Steps,
		ToolCount: len(res.Calls), Usage: &res.Usage, UsagePerStep: res.UsagePerStep, Denials: res.Denials, ExitCode: code, History: res.History})
	if err := rec.Err(); err != nil && code == exitOK {
		return withCode(exitFailure, fmt.Errorf("write events: %w", err))
	}
	if code == exitOK {
		return nil
	}
	if msg != "" {
		fmt.Fprintf(s.io.Err, "%s %s\n", s.io.paint.errorPrefix(), oneLine(msg))
	}
	return &silentError{code: code}
}

// outcome maps a run's status to its exit code and the line to show on
// stderr.
func outcome(res *loop.Result, maxSteps int, timeout time.Duration) (int, string) {
	code, msg := statusOutcome(res, maxSteps, timeout)
	// A --safe refusal is what a CI job running with --safe watches for, so
	// it also wins over a limit: the run tried something it must not.
	if res.Refused && res.Status != loop.StatusDenied && (code == exitOK || code == exitLimit) {
		return exitRefused, strings.TrimPrefix(msg+"; ", "; ") + refusalMessage(res)
	}
	return code, msg
}

// refusalMessage names the calls the policy refused.
func refusalMessage(res *loop.Result) string {
	var names []string
	for _, d := range res.Denials {
		names = append(names, d.Name)
	}
	return fmt.Sprintf("%d tool call(s) refused by policy: %s", len(res.Denials), strings.Join(names, ", "))
}

// statusOutcome maps how the run ended to its exit code and message.
func statusOutcome(res *loop.Result, maxSteps int, timeout time.Duration) (int, string) {
	switch res.Status {
	case loop.StatusCompleted:
		return exitOK, ""
	case loop.StatusMaxSteps:
		return exitLimit, fmt.Sprintf("stopped after %d steps (--max-steps %d): the answer may be incomplete", res.Steps, maxSteps)
	case loop.StatusRepeatedCall:
		return exitLimit, "stopped: the model asked for the same tool call three times"
	case loop.StatusParseFailures:
		return exitLimit, "stopped: three replies in a row did not follow the tool protocol"
	case loop.StatusSchemaFailed:
		return exitLimit, fmt.Sprintf("stopped: %v", res.Err)
	case loop.StatusTimeout:
		return exitTimeout, fmt.Sprintf("stopped: --timeout %s reached", timeout)
	case loop.StatusInterrupted:
		return exitInterrupted, "interrupted"
	case loop.StatusDenied:
		return exitRefused, refusalMessage(res)
	}
	err := res.Err
	if err == nil {
		err = errors.New("run ended without an answer")
	}
	return exitCode(err), err.Error()
}

// note shows an event on stderr: retries always (unless --quiet), every
// request and tool call with --verbose.
func (s *session) note(status *statusLine, ev records.Event) {
	if s.quiet {
		return
	}
	var line string
	switch ev.Type {
	case records.TypeRetry:
		line = fmt.Sprintf("retry %d in %s: %s", ev.Attempt, time.Duration(ev.DelayMS)*time.Millisecond, ev.Error)
	case records.TypeRequest:
		if s.verbose {
			line = fmt.Sprintf("step %d: POST %s (%d bytes)", ev.Step, ev.URL, len(ev.Body))
		}
	case records.TypeToolStarted:
		if s.verbose {
			line = fmt.Sprintf("step %d: %s %s", ev.Step, ev.Name, shorten(ev.Arguments, 120))
		}
	case records.TypeToolFinished:
		if s.verbose && ev.IsError {
			line = fmt.Sprintf("step %d: %s failed: %s", ev.Step, ev.Name, shorten(ev.Content, 200))
		}
	case records.TypeToolDenied:
		line = fmt.Sprintf("step %d: %s denied: %s", ev.Step, ev.Name, ev.Reason)
	}
	if line != "" {
		status.clear()
		fmt.Fprintf(s.io.Err, "ask: %s\n", line)
	}
}

// writeJSON prints v as indented JSON on a terminal and compact JSON in a
// pipe, without HTML escaping.
func writeJSON(w io.Writer, v any, pretty bool) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	enc.Encode(v)
}

func fileOrNil(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

func absPath(wd, p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	return wd + "/" + p
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// shorten keeps text to one line of at most n runes.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
