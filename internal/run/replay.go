package run

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
)

// Replay is the recorded world a replayed run meets: each request is
// answered with the recorded response, the recorded decisions stand for
// the approvals given then, and with recorded results the tools are not
// run either. Put it in Env.Replay and build the run with New, from the
// settings FromTranscript read.
type Replay struct {
	transport       *replayTransport
	events          []records.Event
	recordedResults bool
	system          string
	attachments     []providers.Attachment
	tools           []string
	userTools       []providers.Tool
}

// ReplayOptions are how a transcript is replayed.
type ReplayOptions struct {
	// Check compares each request with the recorded one; Report says how
	// they differ.
	Check bool
	// RecordedResults answers every call with its recorded result instead
	// of running a tool.
	RecordedResults bool
	// Workdir is where the tools run.
	Workdir string
	// The replaying invocation's policy: its --yes, --allow-tool,
	// --deny-tool and --safe. Nothing the transcript records grants a call.
	Yes         Setting[bool]
	AcceptEdits Setting[bool]
	Allow       Setting[[]string]
	Deny        Setting[[]string]
	Safe        Setting[bool]
	// Sandbox and AllowNetwork confine the commands the replay runs; the
	// transcript's are never used.
	Sandbox      Setting[string]
	AllowNetwork Setting[bool]
	// AllowHosts is the replaying invocation's --allow-host.
	AllowHosts Setting[[]string]
	// MCPHeaders are sent to the MCP URLs the transcript names: it keeps
	// none, since they may hold credentials.
	MCPHeaders Setting[[]string]
}

// FromTranscript reads a transcript's events into the settings its run
// had, its prompt, and the recorded world to replay it in.
func FromTranscript(events []records.Event, opt ReplayOptions) (Settings, string, *Replay, error) {
	if len(events) == 0 {
		return Settings{}, "", nil, fault.Usagef("replay: the transcript has no events")
	}
	start := events[0]
	set := start.Settings
	if set == nil {
		return Settings{}, "", nil, fault.Usagef("replay: run.started has no settings")
	}
	const src = "transcript"
	timeout, err := time.ParseDuration(set.Timeout)
	if err != nil || timeout <= 0 {
		timeout = loop.DefaultTimeout
	}
	s := defaults()
	s.Provider = Given(start.Provider, src)
	s.Model = Given(start.Model, src)
	s.BaseURL = Given(set.BaseURL, src)
	s.Mode = Given(cmp.Or(start.Mode, policy.ModeAgent), src)
	s.Safe = Given(set.Safe, src)
	s.MaxSteps = Given(set.MaxSteps, src)
	s.Timeout = Given(timeout, src)
	s.ToolProtocol = Given(cmp.Or(set.ToolProtocol, ToolProtocolAuto), src)
	s.NoStream = Given(!set.Stream, src)
	s.NoCache = Given(set.NoCache, src)
	if set.MaxTokens > 0 {
		s.MaxTokens = Given(set.MaxTokens, src)
	}
	if set.Temperature != nil {
		s.Temperature = Given(*set.Temperature, src)
	}
	s.Reasoning = Given(set.Reasoning, src)
	s.Tier = Given(set.Tier, src)
	s.ToolsFile = Given(set.ToolsFile, src)
	s.MCP = Given(set.MCP, src)
	s.MCPHeaders = opt.MCPHeaders.Or(s.MCPHeaders)
	s.Workdir = Given(opt.Workdir, "flag --workdir")
	// What this invocation allows: its own flags, and --safe if either the
	// recorded run or this one asks for it.
	s.Yes, s.Allow, s.Deny = opt.Yes.Or(s.Yes), opt.Allow.Or(s.Allow), opt.Deny.Or(s.Deny)
	s.AcceptEdits = opt.AcceptEdits.Or(s.AcceptEdits)
	if opt.Safe.Value {
		s.Safe = opt.Safe
	}
	s.Sandbox, s.AllowNetwork = opt.Sandbox.Or(s.Sandbox), opt.AllowNetwork.Or(s.AllowNetwork)
	s.AllowHosts = opt.AllowHosts.Or(s.AllowHosts)
	s.Schema = Given(string(set.Schema), src)
	if set.ContextWindow > 0 {
		s.ContextWindow = Given(set.ContextWindow, src)
	}
	if set.CompactAt > 0 {
		s.CompactAt = Given(set.CompactAt, src)
	}
	if set.Compact != "" {
		s.Compact = Given(set.Compact, src)
	}
	if len(set.History) > 0 {
		s.Conversation = &Conversation{Source: src, Provider: start.Provider, History: set.History}
	}
	rp := &Replay{
		transport:       newReplayTransport(events, opt.Check),
		events:          events,
		recordedResults: opt.RecordedResults,
		system:          set.System,
		attachments:     set.Attachments,
		tools:           set.Tools,
		userTools:       set.UserTools,
	}
	return s, set.Prompt, rp, nil
}

// Report describes every way the replayed requests differed from the
// recorded ones, or "" when they matched.
func (rp *Replay) Report() string { return rp.transport.report() }

// buildTools rebuilds the tools the recorded run offered, in the order it
// declared them. Built-ins are this build's. The others (a tools file's,
// MCP servers') are loaded again from the recorded tools file and server
// commands, so that they really run; with recorded results they are not
// run at all, but declared as recorded, and answered from the transcript.
func (rp *Replay) buildTools(ctx context.Context, r *Run, root *tools.Root) error {
	builtins := tools.Builtins(root)
	byName := map[string]tools.Tool{}
	for _, t := range append(builtins, r.skillTool()...) {
		byName[t.Info().Name] = t
	}
	recorded := map[string]providers.Tool{}
	for _, t := range rp.userTools {
		recorded[t.Name] = t
	}
	var missing []string
	for _, n := range rp.tools {
		if _, ok := byName[n]; !ok {
			missing = append(missing, n)
		}
	}
	s := r.Settings
	if len(missing) > 0 && !rp.recordedResults {
		if s.ToolsFile.Value == "" && len(s.MCP.Value) == 0 {
			return fault.Usagef("replay: the transcript uses tool %q, which this build does not have; replay with --recorded-results", missing[0])
		}
		// The programs are named by the file, which anyone may have
		// edited: they start only on the word of the person replaying.
		held := Held{ToolsFile: s.ToolsFile.Value, MCP: s.MCP.Value}
		flags := strings.Join(held.Flags(), " ")
		if !s.Yes.Value && !r.confirm(ctx, fmt.Sprintf("ask: replay: the recorded run used tools from %s; start them? [y]es [n]o: ", flags)) {
			return fault.Usagef("replay: the transcript's tools come from %s, which replaying would start: give --yes to start them, or --recorded-results to use the recorded results", flags)
		}
		extra, err := r.loadExtraTools(ctx, root, builtins, s.ToolsFile.Value, s.MCP.Value)
		if err != nil {
			return fmt.Errorf("replay: the recorded tools cannot be loaded again (replay with --recorded-results to use the recorded results): %w", err)
		}
		for _, t := range extra {
			byName[t.Info().Name] = t
		}
	}

	var list []tools.Tool
	var declared []providers.Tool
	for _, n := range rp.tools {
		t, ok := byName[n]
		switch {
		case rp.recordedResults && !tools.IsBuiltin(n):
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
			return fault.Usagef("replay: the transcript uses tool %q, which its tools file and MCP servers no longer offer; replay with --recorded-results", n)
		}
	}
	registry, err := tools.NewRegistry(list...)
	if err != nil {
		return err
	}
	// The calls are decided by this invocation's policy, never by the
	// decisions the file records: a transcript can be edited.
	allow, _ := policy.ParsePatterns(s.Allow.Value)
	deny, _ := policy.ParsePatterns(s.Deny.Value)
	pol := policy.New(r.Mode, s.Safe.Value, s.Yes.Value, allow, deny, r.env.Prompter, list)
	pol.AcceptEdits = s.AcceptEdits.Value
	r.warnUnmatchedRules(pol, allow, deny, nil)
	r.useHooks(pol, root) // the replaying invocation's hooks, never the file's
	r.useTools(registry, pol, pol)
	r.Declared = declared
	if rp.recordedResults {
		r.toolbox = newRecordedResults(rp.events)
		// Nothing runs: every call is answered by the record, so nobody
		// is asked, and no rule or profile turns a recorded call away.
		r.gate = policy.New(r.Mode, false, true, nil, nil, nil, list)
	}
	return nil
}

// localProgram stands in for a local model program: each step's reply is
// the recorded one, and its request is checked like an HTTP request.
func (rp *Replay) localProgram(proto providers.Protocol, url string) loop.Model {
	model := ""
	for _, ev := range rp.events {
		if ev.Type == records.TypeRequest {
			model = gjson.GetBytes(records.BodyBytes(ev.Body), "model").String()
			break
		}
	}
	return &replayedProgram{rt: rp.transport, proto: proto, model: model, url: url}
}

type replayedProgram struct {
	rt    *replayTransport
	proto providers.Protocol
	model string // the model name the run put in its requests
	url   string
}

func (m *replayedProgram) CurrentProtocol() providers.Protocol { return m.proto }

func (m *replayedProgram) Call(_ context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
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
// and when checking compares each request with the recorded one.
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
// when checking notes how body differs from the recorded request.
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
