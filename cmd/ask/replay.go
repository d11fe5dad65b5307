package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/demo"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/textproto"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

func replayCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "re-run a recorded transcript offline; with no FILE, the built-in demo",
		ArgsUsage: "[FILE]",
		Description: "The recorded responses stand in for the network; the tools really run, in --workdir.\n" +
			"With no FILE, ask replays its built-in demo session in a fresh copy of the demo project.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "check", Usage: "exit 1 with a diff when the requests this build makes differ from the recorded ones"},
			&cli.BoolFlag{Name: "recorded-results", Usage: "use the recorded tool results instead of running the tools"},
			&cli.StringFlag{Name: "workdir", Value: ".", Usage: "the directory the tools work in"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object with the answer, status, steps, tool calls and usage"},
			&cli.BoolFlag{Name: "events", Usage: "print every event as a JSON line as it happens"},
			&cli.StringFlag{Name: "transcript", Usage: "write the replay's own events to `FILE`"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only errors on stderr"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "describe each request and tool call on stderr"},
		},
		Action: func(c *cli.Context) error { return replayAction(c, stdio) },
	}
}

func replayAction(c *cli.Context, stdio *IO) error {
	if c.NArg() > 1 {
		return usageErr("replay takes one transcript file, got %d arguments", c.NArg())
	}
	if c.Bool("json") && c.Bool("events") {
		return usageErr("--json and --events both write to stdout: choose one")
	}
	var data []byte
	var err error
	workdir := absPath(stdio.Wd, c.String("workdir"))
	switch name := c.Args().First(); name {
	case "":
		data = demo.Transcript()
		if !c.IsSet("workdir") {
			dir, err := os.MkdirTemp("", "ask-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := demo.Extract(dir); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			workdir = dir
		}
	case "-":
		data, err = io.ReadAll(stdio.In)
	default:
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return usageErr("replay: %v", err)
	}
	events, err := records.Read(bytes.NewReader(data))
	if err != nil {
		return usageErr("replay: %v", err)
	}
	start := events[0]
	set := start.Settings
	if set == nil {
		return usageErr("replay: run.started has no settings")
	}
	prov, err := catalog.Lookup(start.Provider)
	if err != nil {
		return usageErr("replay: %v", err)
	}
	proto, err := catalog.NewProtocol(prov.Protocol)
	if err != nil {
		return usageErr("replay: %v", err)
	}
	proto = schemaProtocol(prov, proto)
	root, err := tools.NewRoot(workdir)
	if err != nil {
		return usageErr("--workdir: %v", err)
	}

	declared, toolbox, stopTools, err := replayTools(c, stdio, root, set, events)
	if err != nil {
		return err
	}
	defer stopTools()

	rt := newReplayTransport(events, c.Bool("check"))
	timeout, err := time.ParseDuration(set.Timeout)
	if err != nil || timeout <= 0 {
		timeout = 5 * time.Minute
	}
	s := &session{
		io:        stdio,
		provider:  prov.Name,
		modelName: start.Model,
		baseURL:   set.BaseURL,
		model: &providers.Caller{
			Provider: prov.Name, Protocol: proto, BaseURL: set.BaseURL, Model: start.Model, Header: prov.Header,
			HTTP: &http.Client{Transport: rt}, Retries: 2,
			Sleep: func(context.Context, time.Duration) error { return nil },
		},
		system:     set.System,
		prompt:     set.Prompt,
		mode:       firstNonEmpty(start.Mode, policy.ModeAgent),
		gate:       newRecordedGate(events),
		declared:   declared,
		toolbox:    toolbox,
		workdir:    root.Dir(),
		maxSteps:   set.MaxSteps,
		timeout:    timeout,
		stream:     set.Stream,
		maxTokens:  set.MaxTokens,
		schema:     set.Schema,
		history:    set.History,
		jsonOut:    c.Bool("json"),
		events:     c.Bool("events"),
		transcript: c.String("transcript"),
		quiet:      c.Bool("quiet"),
		verbose:    c.Bool("verbose"),
	}
	if err := replayToolProtocol(stdio, s, prov, set, rt, events, c.Bool("quiet")); err != nil {
		return err
	}
	runErr := s.execute(c.Context)
	if c.Bool("check") {
		if diffs := rt.report(); diffs != "" {
			fmt.Fprint(stdio.Err, diffs)
			return withCode(exitFailure, fmt.Errorf("replay --check: the requests differ from the recorded ones"))
		}
	}
	return runErr
}

// replayTools rebuilds the tools a transcript's run offered, in the order
// it declared them. Built-ins are this build's. The others (a tools file's,
// MCP servers') are loaded again from the recorded tools file and server
// commands, so that they really run; with --recorded-results they are not
// run at all, but declared as recorded, and answered from the transcript.
func replayTools(c *cli.Context, stdio *IO, root *tools.Root, set *records.Settings, events []records.Event) ([]providers.Tool, loop.Toolbox, func(), error) {
	noop := func() {}
	builtins := tools.Builtins(root)
	byName := map[string]tools.Tool{}
	for _, t := range builtins {
		byName[t.Info().Name] = t
	}
	recorded := map[string]providers.Tool{}
	for _, t := range set.UserTools {
		recorded[t.Name] = t
	}
	var missing []string
	for _, n := range set.Tools {
		if _, ok := byName[n]; !ok {
			missing = append(missing, n)
		}
	}

	stop := noop
	if len(missing) > 0 && !c.Bool("recorded-results") {
		if set.ToolsFile == "" && len(set.MCP) == 0 {
			return nil, nil, noop, usageErr("replay: the transcript uses tool %q, which this build does not have; replay with --recorded-results", missing[0])
		}
		extra, stopExtra, err := loadExtraTools(c.Context, stdio, root, builtins, set.ToolsFile, set.MCP, c.Bool("verbose") && !c.Bool("quiet"))
		if err != nil {
			return nil, nil, noop, fmt.Errorf("replay: the recorded tools cannot be loaded again (replay with --recorded-results to use the recorded results): %w", err)
		}
		stop = stopExtra
		for _, t := range extra {
			byName[t.Info().Name] = t
		}
	}

	var list []tools.Tool
	var declared []providers.Tool
	for _, n := range set.Tools {
		t, ok := byName[n]
		switch {
		case c.Bool("recorded-results") && !tools.IsBuiltin(n):
			// Declared as the run declared it; a transcript from before
			// user_tools was recorded gives the name only.
			d, ok := recorded[n]
			if !ok {
				d = providers.Tool{Name: n}
			}
			declared = append(declared, d)
		case ok:
			list = append(list, t)
			info := t.Info()
			declared = append(declared, providers.Tool{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
		default:
			stop()
			return nil, nil, noop, usageErr("replay: the transcript uses tool %q, which its tools file and MCP servers no longer offer; replay with --recorded-results", n)
		}
	}
	if c.Bool("recorded-results") {
		return declared, newRecordedResults(events), stop, nil
	}
	reg, err := tools.NewRegistry(list...)
	if err != nil {
		stop()
		return nil, nil, noop, err
	}
	return declared, reg, stop, nil
}

// replayToolProtocol puts in place the tool protocol the run used: the
// text protocol it chose (or auto's switch to it, which the recorded
// refusal triggers again), and for a command model, a stand-in that
// answers from the transcript without running any program.
func replayToolProtocol(stdio *IO, s *session, prov catalog.Provider, set *records.Settings, rt *replayTransport, events []records.Event, quiet bool) error {
	choice := firstNonEmpty(set.ToolProtocol, toolProtoAuto)
	if prov.Protocol != "command" {
		return applyToolProtocol(stdio, s, prov, choice, quiet)
	}
	form := textproto.JSON
	if choice == toolProtoMarkdown {
		form = textproto.Markdown
	}
	proto := textproto.Wrap(s.model.CurrentProtocol(), form, s.declared)
	model := ""
	for _, ev := range events {
		if ev.Type == records.TypeRequest {
			model = gjson.GetBytes(records.BodyBytes(ev.Body), "model").String()
			break
		}
	}
	s.model = &replayedCommand{rt: rt, proto: proto, model: model, url: s.baseURL}
	s.stream = false
	return nil
}

// replayedCommand stands in for a command model: each step's reply is the
// recorded one, and its request is checked like an HTTP request.
type replayedCommand struct {
	rt    *replayTransport
	proto providers.Protocol
	model string // the model name the run put in its requests
	url   string
}

func (m *replayedCommand) CurrentProtocol() providers.Protocol { return m.proto }

func (m *replayedCommand) Call(_ context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	req.Model = m.model
	body, err := m.proto.BuildRequest(req)
	if err != nil {
		return nil, fmt.Errorf("command: build request: %w", err)
	}
	if h.OnRequest != nil {
		h.OnRequest(m.url, nil, body)
	}
	x, err := m.rt.take(body)
	if err != nil {
		return nil, err
	}
	if h.OnResponse != nil {
		h.OnResponse(x.status, nil, x.response)
	}
	turn, err := providers.ParseResponse(m.proto, x.response)
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	if h.OnDelta != nil && turn.Text != "" {
		h.OnDelta(turn.Text)
	}
	return turn, nil
}

// exchange is one recorded request and the response it got.
type exchange struct {
	request  []byte
	status   int
	header   map[string]string
	response []byte
	answered bool
}

// replayTransport answers the n-th request with the n-th recorded response,
// and with --check compares each request with the recorded one.
type replayTransport struct {
	mu        sync.Mutex
	exchanges []exchange
	next      int
	check     bool
	diffs     []string
}

func newReplayTransport(events []records.Event, check bool) *replayTransport {
	rt := &replayTransport{check: check}
	for _, ev := range events {
		switch ev.Type {
		case records.TypeRequest:
			rt.exchanges = append(rt.exchanges, exchange{request: records.BodyBytes(ev.Body)})
		case records.TypeResponse:
			if n := len(rt.exchanges); n > 0 && !rt.exchanges[n-1].answered {
				x := &rt.exchanges[n-1]
				x.status, x.header, x.response, x.answered = ev.HTTPStatus, ev.Headers, records.BodyBytes(ev.Body), true
			}
		}
	}
	return rt
}

func (rt *replayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	x, err := rt.take(body)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range x.header {
		h.Set(k, v)
	}
	return &http.Response{
		StatusCode: x.status, Status: fmt.Sprintf("%d %s", x.status, http.StatusText(x.status)),
		Header: h, Body: io.NopCloser(bytes.NewReader(x.response)), Request: req,
		ProtoMajor: 1, ProtoMinor: 1, ContentLength: int64(len(x.response)),
	}, nil
}

// take answers the next request, body, with the recorded exchange, and
// with --check notes how body differs from the recorded request.
func (rt *replayTransport) take(body []byte) (exchange, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := rt.next
	rt.next++
	if n >= len(rt.exchanges) {
		return exchange{}, fmt.Errorf("replay: this run made request %d, but the transcript records only %d", n+1, len(rt.exchanges))
	}
	x := rt.exchanges[n]
	if rt.check {
		for _, d := range records.DiffJSON(x.request, body, 20) {
			rt.diffs = append(rt.diffs, fmt.Sprintf("request %d: %s", n+1, d))
		}
	}
	if !x.answered {
		return exchange{}, fmt.Errorf("replay: the recorded request %d got no response (the connection failed)", n+1)
	}
	return x, nil
}

// report describes every difference found, or "" when the run matched.
func (rt *replayTransport) report() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var b strings.Builder
	if rt.next != len(rt.exchanges) {
		fmt.Fprintf(&b, "replay --check: the transcript records %d requests, this run made %d\n", len(rt.exchanges), rt.next)
	}
	for _, d := range rt.diffs {
		b.WriteString("  " + d + "\n")
	}
	return b.String()
}

// recordedResults answers each call with the result recorded for the same
// tool and arguments, in recorded order.
type recordedResults struct {
	mu      sync.Mutex
	results map[string][]records.Event
}

func newRecordedResults(events []records.Event) *recordedResults {
	r := &recordedResults{results: map[string][]records.Event{}}
	args := map[string]string{} // call id → arguments, from tool.started
	for _, ev := range events {
		switch ev.Type {
		case records.TypeToolStarted:
			args[ev.ID] = ev.Arguments
		case records.TypeToolFinished:
			key := resultKey(ev.Name, args[ev.ID])
			r.results[key] = append(r.results[key], ev)
		}
	}
	return r
}

func (r *recordedResults) Call(_ context.Context, name, arguments string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := resultKey(name, arguments)
	evs := r.results[key]
	if len(evs) == 0 {
		return fmt.Sprintf("replay: the transcript has no result for %s with these arguments", name), true
	}
	r.results[key] = evs[1:]
	return evs[0].Content, evs[0].IsError
}

// resultKey identifies a call by its tool and arguments. The arguments are
// compacted: a transcript keeps response bodies as JSON, so the arguments a
// replayed response yields may differ in white space from those recorded.
func resultKey(name, arguments string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(arguments)) == nil {
		arguments = b.String()
	}
	return name + "\x00" + arguments
}

// recordedGate repeats the recorded run's decisions: a call denied then is
// denied again with the same reason, every other call runs. The recording
// stands for the approvals given at the time; nobody is asked again.
type recordedGate struct {
	denied map[string]string // call id → reason
}

func newRecordedGate(events []records.Event) *recordedGate {
	g := &recordedGate{denied: map[string]string{}}
	for _, ev := range events {
		if ev.Type == records.TypeToolDenied {
			g.denied[ev.ID] = ev.Reason
		}
	}
	return g
}

func (g *recordedGate) Check(_ context.Context, calls []providers.ToolCall) []policy.Verdict {
	out := make([]policy.Verdict, len(calls))
	for i, c := range calls {
		reason, denied := g.denied[c.ID]
		out[i] = policy.Verdict{Allowed: !denied, Reason: reason, Refusal: denied && strings.HasPrefix(reason, "refused by --safe")}
	}
	return out
}
